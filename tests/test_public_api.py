import subprocess
import sys

import pytest

import ragmeter


def test_every_public_name_resolves():
    for name in ragmeter.__all__:
        assert getattr(ragmeter, name) is not None
    assert set(ragmeter.__all__) <= set(dir(ragmeter))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = ragmeter.nope


def test_importing_ragmeter_loads_nothing_heavy():
    code = "import sys, ragmeter; print('ragmeter.runner' in sys.modules, 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
