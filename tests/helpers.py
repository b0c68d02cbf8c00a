from tests.conftest import ouro_json, run_ouro, snapshot

__all__ = ["ouro_json", "run_ouro", "snapshot"]
