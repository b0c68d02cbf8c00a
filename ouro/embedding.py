"""The embedding model behind search by meaning (``ouro-bundle[semantic]``).

Contract:

- The model is wordllama 0.4.0.post1's ``l2_supercat_256`` static embedding
  (MIT), read from the files *inside the installed wheel* (its
  ``weights/*.safetensors`` and ``tokenizers/*.json``) with numpy and
  tokenizers. Nothing is downloaded, ever: wordllama's own loader (which may
  fall back to the network) is never imported. Without the extra,
  ``available()`` is False and every caller keeps to lexical search.
- A text's vector is the mean of its tokens' embeddings, cut to the first
  ``DIM`` (128) dimensions and scaled to unit length.
- Two users: the index's vectors (``ouro.index.semantic``) and the diary's
  near-duplicate check by meaning (``near_fact``, setting ``diary.near =
  meaning``), which is why this sits below the domains, not in the index.
- Importing this module imports neither numpy nor tokenizers; ``model()`` does.
"""

from __future__ import annotations

import functools
import os

from ouro.store import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np
    from numpy.typing import NDArray

MODEL = "wordllama-0.4.0.post1/l2_supercat_256"
#: the model's dimensions, and the first DIM of them that ouro keeps: the model is
#: trained to be truncated (Matryoshka); 128 ranked the labelled set better than
#: 256 (51 vs 46 paraphrases in the top 5) and halves the scan per query
MODEL_DIM = 256
DIM = 128
ENABLE_HINT = "install the optional embedding model: pip install 'ouro-bundle[semantic]'"


@functools.cache
def package_dir() -> str | None:
    """The installed wordllama package folder, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = next(iter(spec.submodule_search_locations))
    files = (_weights_file(folder), _tokenizer_file(folder))
    return folder if all(os.path.isfile(f) for f in files) else None


def _weights_file(folder: str) -> str:
    return os.path.join(folder, "weights", "l2_supercat_256.safetensors")


def _tokenizer_file(folder: str) -> str:
    return os.path.join(folder, "tokenizers", "l2_supercat_tokenizer_config.json")


def available() -> bool:
    """Whether the extra is installed (numpy, tokenizers and the model files)."""
    import importlib.util

    if package_dir() is None:
        return False
    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "tokenizers"))


def require() -> None:
    from ouro.errors import InvalidInput

    if not available():
        raise InvalidInput(f"mode: search by meaning is not installed; {ENABLE_HINT}")


class Model:
    """Token embeddings and the tokenizer, loaded once per process."""

    def __init__(self, folder: str) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        with open(_weights_file(folder), "rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            header = jsonio.loads(handle.read(size))
        meta = header["embedding.weight"]
        start, end = meta["data_offsets"]
        rows, dims = meta["shape"]
        if meta["dtype"] != "F16" or dims != MODEL_DIM or end - start != rows * dims * 2:
            from ouro.errors import OuroError

            raise OuroError(
                f"{_weights_file(folder)} is not the expected model ({meta})",
                hint="reinstall with pip install 'ouro-bundle[semantic]'",
            )
        # mapped, not read: a query touches only its tokens' rows
        self.raw = np.memmap(
            _weights_file(folder),
            dtype="<f2",
            mode="r",
            offset=8 + size + start,
            shape=tuple(meta["shape"]),
        )
        self._table: NDArray[np.float32] | None = None
        self.tokenizer = Tokenizer.from_file(_tokenizer_file(folder))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    @property
    def table(self) -> NDArray[np.float32]:
        """The first ``DIM`` dimensions of every token, as float32 (made once)."""
        import numpy as np

        if self._table is None:
            self._table = np.ascontiguousarray(self.raw[:, :DIM], dtype=np.float32)
        return self._table

    def _rows(self, table: NDArray[np.float32] | None, ids: Any) -> NDArray[np.float32]:
        import numpy as np

        if table is not None:
            rows: NDArray[np.float32] = table[ids]
            return rows
        return np.asarray(self.raw[ids][:, :DIM], dtype=np.float32)

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit vectors, one row per text (a text without tokens: all zeros)."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        encoded = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        # one text (a query) before the table is made: read only its tokens'
        # rows (the same float32 values, summed in the same order)
        table = self.table if len(texts) > 1 or self._table is not None else None
        last = self.raw.shape[0] - 1
        # One text at a time: gathering every token row of a batch at once
        # builds a (tokens x 256) temporary that costs far more than the sums.
        for row, enc in enumerate(encoded):
            if not enc.ids:
                continue
            ids = np.minimum(np.asarray(enc.ids, dtype=np.int64), last)
            if len(ids) > 64:  # long text: each distinct token once, times its count
                unique, counts = np.unique(ids, return_counts=True)
                total = counts.astype(np.float32) @ self._rows(table, unique)
            else:
                total = self._rows(table, ids).sum(axis=0)
            norm = float(np.linalg.norm(total))
            if norm:
                out[row] = total / norm
        return out


@functools.cache
def model() -> Model:
    require()
    folder = package_dir()
    assert folder is not None
    return Model(folder)


# --- near-duplicate facts by meaning (diary_write, setting diary.near = meaning) ---

#: a new fact whose cosine with an active fact sharing an ``about`` entity is at
#: least this restates it (measured on bench/data/near_duplicates.tsv: 25 of 40
#: restatements caught, 0 of 40 different facts about the same thing refused)
NEAR_COSINE = 0.8
#: the most recent facts of the entities compared with a new fact
NEAR_CANDIDATES = 2000


def near_fact(text: str, candidates: list[tuple[str, str]]) -> tuple[str, float] | None:
    """The first candidate ``(fact id, text)`` with the highest cosine >= ``NEAR_COSINE``."""
    if not candidates:
        return None
    candidates = candidates[-NEAR_CANDIDATES:]
    vecs = model().embed([text, *(t for _fid, t in candidates)])
    scores = vecs[1:] @ vecs[0]
    best = int(scores.argmax())
    score = float(scores[best])
    return (candidates[best][0], score) if score >= NEAR_COSINE else None
