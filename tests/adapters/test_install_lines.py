"""The install line of a framework's extra: torch's CPU build first where the extra needs torch itself, then every
other package of the extra, including those whose names only begin with "torch" (torchtune, torchao, torchmetrics)."""

from __future__ import annotations

from importlib import metadata

from embconf.adapters.frameworks import TORCH_CPU, install_line

REQUIRES = [
    'torchtune>=0.5; extra == "torchtune"',
    'torchao<0.18,>=0.10; extra == "torchtune"',
    'torch>=2.0; extra == "torchtune"',
    'torch>=2.0; extra == "torch"',
    'tensorflow>=2.13; extra == "tensorflow"',
]


def test_packages_named_like_torch_are_installed_after_torchs_cpu_build(monkeypatch):
    monkeypatch.setattr(metadata, "requires", lambda name: REQUIRES)
    line = install_line("torchtune")
    assert line.startswith(TORCH_CPU) and line.endswith("then pip install 'torchtune>=0.5' 'torchao<0.18,>=0.10'")
    assert install_line("torch") == f"{TORCH_CPU} (the CPU build is enough)"
    assert install_line("tensorflow") == "pip install 'tensorflow>=2.13'"
