"""llama.cpp for the embedded judge, through a prebuilt binding: nothing to compile.

The binding is the CPU build inside ``llama-cpp-cffi`` (a manylinux_2_28 wheel, so it loads
on glibc 2.28+ and GCC 12's libstdc++): its extension module exposes llama.cpp's C API
through cffi. Only that module is loaded (by file, not through the ``llama`` package, whose
``__init__`` wants transformers and more that ragmeter never uses), so the wheel is
installed without its dependencies (``pip install --no-deps``).

:class:`LlamaModel` is the little the embedded judge needs: tokenize, evaluate with a KV
cache reused across requests, read logits, greedy steps under a grammar, and the model's
own chat template rendered the way Hugging Face renders it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

#: The binding: package, version and the extension module loaded from it.
PACKAGE = "llama-cpp-cffi"
VERSION = "0.4.18"
_MODULE = "_llama_cpp_cpu"
_LOG_ERROR = 4  # GGML_LOG_LEVEL_ERROR

#: Any JSON value (llama.cpp's grammars/json.gbnf), for a schema the converter cannot express.
JSON_GBNF = r"""root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
"""


class LlamaUnavailableError(ImportError):
    """The prebuilt llama.cpp binding is not installed (or does not load here)."""


@cache
def _binding() -> tuple[Any, Any]:
    """(ffi, lib) of the binding's CPU extension module, loaded once per process."""
    spec = importlib.util.find_spec("llama")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    candidates = [p for folder in folders for p in Path(folder).glob(f"{_MODULE}.*.so")]
    if not candidates:
        raise LlamaUnavailableError(f"{PACKAGE}=={VERSION} is not installed")
    module_spec = importlib.util.spec_from_file_location(_MODULE, candidates[0])
    if module_spec is None or module_spec.loader is None:
        raise LlamaUnavailableError(f"cannot load {candidates[0]}")
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except ImportError as error:  # e.g. a libstdc++ older than the build's
        raise LlamaUnavailableError(f"{PACKAGE} does not load on this system: {error}") from None
    ffi, lib = module.ffi, module.lib

    # llama.cpp logs every tensor it loads to stderr: keep its errors only.
    @ffi.def_extern(name="llama_cpp_cffi_ggml_log_callback")  # type: ignore[untyped-decorator]
    def _log(level: int, text: Any, user_data: Any) -> None:
        if level == _LOG_ERROR:
            sys.stderr.write(ffi.string(text).decode("utf-8", errors="replace"))

    lib.llama_log_set(lib.llama_cpp_cffi_ggml_log_callback, ffi.NULL)
    lib.llama_backend_init()
    return ffi, lib


def available() -> bool:
    """Whether the binding is installed and loads on this system."""
    try:
        _binding()
    except LlamaUnavailableError:
        return False
    return True


def _render_template(template: str) -> Any:
    """The chat template compiled as Hugging Face's transformers compiles it."""
    import jinja2
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _IgnoreGeneration(Extension):  # HF's {% generation %} tag: pass-through
        tags = {"generation"}  # noqa: RUF012 - as jinja2 declares it

        def parse(self, parser: Any) -> Any:
            parser.stream.skip(1)
            return parser.parse_statements(("name:endgeneration",), drop_needle=True)

    environment = ImmutableSandboxedEnvironment(
        loader=jinja2.BaseLoader(),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_IgnoreGeneration, loopcontrols],
    )

    def tojson(
        x: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    environment.filters["tojson"] = tojson
    return environment.from_string(template)


def _raise(message: str) -> None:
    raise ValueError(message)


class LlamaModel:
    """One GGUF model's weights and vocabulary, shared by its contexts (:meth:`context`)."""

    def __init__(self, path: Path) -> None:
        self._ffi, self._lib = ffi, lib = _binding()
        params = lib.llama_model_default_params()
        self._model = lib.llama_model_load_from_file(str(path).encode("utf-8"), params)
        if self._model == ffi.NULL:
            raise ValueError(f"llama.cpp could not load the model file {path}")
        self.path = path
        self._vocab = lib.llama_model_get_vocab(self._model)
        self.n_vocab = int(lib.llama_vocab_n_tokens(self._vocab))
        self._contexts: list[LlamaContext] = []

    def context(self, *, n_ctx: int, n_threads: int, n_batch: int = 512) -> LlamaContext:
        """A new context (a KV cache of ``n_ctx`` tokens) on these weights."""
        context = LlamaContext(self, n_ctx=n_ctx, n_threads=n_threads, n_batch=n_batch)
        self._contexts.append(context)
        return context

    def close(self) -> None:
        """Free the contexts, then the weights."""
        for context in self._contexts:
            context.close()
        if self._model is not None:
            self._lib.llama_model_free(self._model)
            self._model = None

    # -- text and tokens --------------------------------------------------------------------
    def metadata(self, key: str) -> str | None:
        """A GGUF metadata string (``tokenizer.chat_template``...), ``None`` when absent."""
        size = 1 << 16
        while True:
            buffer = self._ffi.new("char[]", size)
            n = self._lib.llama_model_meta_val_str(self._model, key.encode(), buffer, size)
            if n < 0:
                return None
            if n < size:
                return bytes(self._ffi.buffer(buffer, n)).decode("utf-8")
            size = n + 1

    def chat_formatter(self) -> Any:
        """``render(messages) -> str``: the model's chat template, generation prompt added."""
        template = self.metadata("tokenizer.chat_template")
        if not template:
            return None
        compiled = _render_template(template)
        eos = int(self._lib.llama_vocab_eos(self._vocab))
        bos = int(self._lib.llama_vocab_bos(self._vocab))
        eos_text = self.token_text(eos) if eos != -1 else ""
        bos_text = self.token_text(bos) if bos != -1 else ""

        def render(messages: Sequence[dict[str, str]]) -> str:
            return str(
                compiled.render(
                    messages=list(messages),
                    eos_token=eos_text,
                    bos_token=bos_text,
                    raise_exception=_raise,
                    add_generation_prompt=True,
                    functions=None,
                    function_call=None,
                    tools=None,
                    tool_choice=None,
                    strftime_now=lambda f: datetime.now().strftime(f),
                )
            )

        return render

    def token_text(self, token: int) -> str:
        return str(self._ffi.string(self._lib.llama_vocab_get_text(self._vocab, token)).decode())

    def is_eog(self, token: int) -> bool:
        return bool(self._lib.llama_vocab_is_eog(self._vocab, token))

    def tokenize(self, text: bytes, *, add_bos: bool, special: bool) -> list[int]:
        size = len(text) + 8
        buffer = self._ffi.new("llama_token[]", size)
        n = self._lib.llama_tokenize(self._vocab, text, len(text), buffer, size, add_bos, special)
        if n < 0:  # too small: -n is the size needed
            size = -n
            buffer = self._ffi.new("llama_token[]", size)
            n = self._lib.llama_tokenize(
                self._vocab, text, len(text), buffer, size, add_bos, special
            )
        return [int(t) for t in buffer[0:n]]

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        pieces = bytearray()
        buffer = self._ffi.new("char[]", 256)
        for token in tokens:
            n = self._lib.llama_token_to_piece(self._vocab, token, buffer, 256, 0, False)
            if n < 0:
                bigger = self._ffi.new("char[]", -n)
                n = self._lib.llama_token_to_piece(self._vocab, token, bigger, -n, 0, False)
                pieces += self._ffi.buffer(bigger, n)
            else:
                pieces += self._ffi.buffer(buffer, n)
        return bytes(pieces)

    # -- grammars ---------------------------------------------------------------------------
    def json_schema_grammar(self, schema_json: str) -> str:
        """llama.cpp's own JSON-schema-to-GBNF conversion."""
        source = self._ffi.new("char[]", schema_json.encode("utf-8"))
        result = self._lib.llama_json_schema_to_grammar(source)
        if result == self._ffi.NULL:
            raise ValueError("llama.cpp could not convert the JSON schema to a grammar")
        try:
            return str(self._ffi.string(result).decode("utf-8"))
        finally:
            self._lib.free(result)

    @contextmanager
    def grammar(self, gbnf: str) -> Iterator[Any]:
        """A grammar sampler: ``allowed(ids, logits) -> mask`` and ``accept(token)``."""
        ffi, lib = self._ffi, self._lib
        sampler = lib.llama_sampler_init_grammar(self._vocab, gbnf.encode("utf-8"), b"root")
        if sampler == ffi.NULL:
            raise ValueError("llama.cpp could not compile the grammar")
        try:
            yield _Grammar(ffi, lib, sampler)
        finally:
            lib.llama_sampler_free(sampler)


class LlamaContext:
    """One context (KV cache) of a :class:`LlamaModel`; not thread-safe (one user at a time).

    ``input_ids[:n_tokens]`` are the tokens whose keys and values it holds, so a request that
    shares a prefix with its last one evaluates only the rest.
    """

    def __init__(self, model: LlamaModel, *, n_ctx: int, n_threads: int, n_batch: int) -> None:
        self.model = model
        self._ffi, self._lib = ffi, lib = model._ffi, model._lib
        params = lib.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        self._ctx = lib.llama_init_from_model(model._model, params)
        if self._ctx == ffi.NULL:
            raise ValueError(f"llama.cpp could not create a context for {model.path}")
        self.n_ctx = int(lib.llama_n_ctx(self._ctx))
        self.n_batch = n_batch
        self.n_vocab = model.n_vocab
        self.input_ids: list[int] = []
        self.n_tokens = 0
        self._batch = lib.llama_batch_init(n_batch, 0, 1)

    def close(self) -> None:
        if self._ctx is not None:
            self._lib.llama_batch_free(self._batch)
            self._lib.llama_free(self._ctx)
            self._ctx = None

    # -- evaluation -------------------------------------------------------------------------
    def reset(self) -> None:
        self.n_tokens = 0
        del self.input_ids[:]

    def _decode(self, tokens: Sequence[int], logits_all: bool) -> None:
        batch = self._batch
        n_past = self.n_tokens
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = n_past + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = logits_all or i == len(tokens) - 1
        batch.n_tokens = len(tokens)
        status = self._lib.llama_decode(self._ctx, batch)
        if status != 0:
            raise RuntimeError(f"llama_decode returned {status}")
        del self.input_ids[n_past:]
        self.input_ids.extend(int(t) for t in tokens)
        self.n_tokens += len(tokens)

    def eval(self, tokens: Sequence[int], *, logits_all: bool = False) -> None:
        """Evaluate ``tokens`` after ``input_ids[:n_tokens]`` (what lies beyond is dropped
        from the KV cache), ``n_batch`` at a time; logits of the last token (or of each
        token of the last batch with ``logits_all``)."""
        self._lib.llama_kv_cache_seq_rm(self._ctx, -1, self.n_tokens, -1)
        for start in range(0, len(tokens), self.n_batch):
            self._decode(tokens[start : start + self.n_batch], logits_all)

    def logits(self, i: int = -1) -> Any:
        """The logits of the ``i``-th token of the last batch that asked for them."""
        pointer = self._lib.llama_get_logits_ith(self._ctx, i)
        return np.frombuffer(self._ffi.buffer(pointer, self.n_vocab * 4), dtype=np.float32)


class _Grammar:
    def __init__(self, ffi: Any, lib: Any, sampler: Any) -> None:
        self._ffi, self._lib, self._sampler = ffi, lib, sampler

    def apply(self, ids: Any, logits: Any) -> Any:
        """``logits`` of the candidate ``ids`` with the tokens the grammar forbids at -inf."""
        n = len(ids)
        data = self._ffi.new("llama_token_data[]", n)
        view = np.frombuffer(
            self._ffi.buffer(data, n * 12),
            dtype=np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)]),
        )
        view["id"] = ids
        view["logit"] = logits
        array = self._ffi.new(
            "llama_token_data_array *", {"data": data, "size": n, "selected": -1, "sorted": False}
        )
        self._lib.llama_sampler_apply(self._sampler, array)
        return view["logit"].copy()

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self._sampler, token)
