"""The target loader and adapter plugins: a package file is imported under its dotted name, a plain file from its
location, a shadowing package is reported, loader failures are implementation errors, and a third-party adapter
registered by entry point is named like a built-in (one line when it fails to load)."""

from __future__ import annotations

import pytest
from helpers import EXAMPLE_STUDENT, IMPLS, ROOT, assert_exit, assert_one_line_error, run_cli

from embconf.adapters import ImplementationError
from embconf.adapters.loading import load_module, package_location

pytestmark = pytest.mark.usefixtures("isolated_imports")


def test_package_file_is_imported_under_its_dotted_name():
    root, dotted = package_location(EXAMPLE_STUDENT.resolve())
    assert dotted == "tinytorch.core.embeddings" and root == (ROOT / "examples" / "tinytorch_student").resolve()
    module = load_module(str(EXAMPLE_STUDENT))
    assert module.__name__ == "tinytorch.core.embeddings" and module.Tensor.__module__ == "tinytorch.core.tensor"


def test_plain_file_is_loaded_from_its_location(tmp_path):
    (tmp_path / "helper_for_plain.py").write_text("VALUE = 7\n")
    (tmp_path / "plain.py").write_text("from helper_for_plain import VALUE\n")
    assert load_module(str(tmp_path / "plain.py")).VALUE == 7


def test_a_shadowing_package_is_reported(tmp_path):
    for tree in ("first", "second"):
        package = tmp_path / tree / "embconf_shadow_pkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "impl.py").write_text(f"WHERE = {tree!r}\n")
    assert load_module(str(tmp_path / "first" / "embconf_shadow_pkg" / "impl.py")).WHERE == "first"
    with pytest.raises(ImplementationError, match="shadows it"):
        load_module(str(tmp_path / "second" / "embconf_shadow_pkg" / "impl.py"))


@pytest.mark.parametrize(
    "target, words",
    [
        ("no/such/file.py", "no such file"),
        ("not a module", "neither"),
        ("embconf_no_such_module_xyz", "ModuleNotFoundError"),
    ],
)
def test_loader_failures_are_implementation_errors(target, words):
    with pytest.raises(ImplementationError, match=words):
        load_module(target)


def _install_plugin(root, body: str) -> dict:
    """A third-party adapter package registered in the entry point group, visible through PYTHONPATH."""
    (root / "demo_embconf_plugin.py").write_text(body)
    info = root / "demo_embconf_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-embconf-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[embconf.adapters]\ndemo = demo_embconf_plugin:make\n")
    return {"PYTHONPATH": str(root)}


def test_a_third_party_adapter_registered_by_entry_point_is_named_like_a_builtin(tmp_path):
    env = _install_plugin(
        tmp_path,
        (
            '"""Demo plugin: an adapter for a NumPy module, reached as demo:PATH."""\n'
            "from embconf.adapters.functions import FunctionsAdapter\n\n\n"
            "def make(target):\n"
            "    return FunctionsAdapter(target)\n"
        ),
    )
    result = run_cli("run", "--impl", f"demo:{IMPLS / 'numpy_functions.py'}", "--select", "lookup.*", "-q", env=env)
    assert_exit(result, 0)
    assert " pass" in result.stdout and "fail" not in result.stdout.splitlines()[-1]
    unknown = run_cli("run", "--impl", "nosuch:x", env=env)
    assert_one_line_error(unknown, "demo")  # listed among the known kinds


def test_a_plugin_that_fails_to_load_is_one_line(tmp_path):
    env = _install_plugin(tmp_path, "raise RuntimeError('plugin is broken')\n")
    result = run_cli("run", "--impl", "demo:x", env=env)
    assert_one_line_error(result, "adapter plugin 'demo' failed to load: RuntimeError: plugin is broken")
