"""setup.cfg lists every package (it cannot use find: because the alias packages are
mapped from tbe_compat/aliases/ to top-level names); a missing entry would silently
drop modules from ``pip install .``."""
import configparser
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALIASES = ROOT / "tbe_compat" / "aliases"
#: PEP 420 namespace packages (no __init__.py) among the aliases: they never shadow a
#: user's own regular package of the same name.
NAMESPACE_PACKAGES = {"impl", "impl.util"}


def _options():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    packages = {line.strip() for line in cfg["options"]["packages"].splitlines() if line.strip()}
    package_dir = dict(line.split("=", 1) for line in cfg["options"]["package_dir"].splitlines() if line.strip())
    return packages, {k.strip(): v.strip() for k, v in package_dir.items()}


def _package_dirs(base: pathlib.Path, skip: pathlib.Path = None):
    for init in sorted(base.rglob("__init__.py")):
        if skip is not None and skip in init.parents:
            continue
        if "__pycache__" not in init.parts:
            yield init.parent


def test_every_source_package_is_listed():
    packages, _ = _options()
    missing = []
    for top in ("pto_core", "tbe_compat"):
        for directory in _package_dirs(ROOT / top, skip=ALIASES):
            name = ".".join(directory.relative_to(ROOT).parts)
            if name not in packages:
                missing.append(name)
    assert "tbe_compat.aliases" in packages
    assert not missing, f"add to setup.cfg [options] packages: {missing}"


def test_every_alias_package_is_listed_and_mapped():
    packages, package_dir = _options()
    for top in ("tbe", "te", "topi"):
        assert package_dir[top] == f"tbe_compat/aliases/{top}"
        for directory in _package_dirs(ALIASES / top):
            name = ".".join(directory.relative_to(ALIASES).parts)
            assert name in packages, f"add {name} to setup.cfg [options] packages"
    for name in packages:
        top = name.split(".")[0]
        where = ROOT / package_dir.get(top, top) / pathlib.Path(*name.split(".")[1:])
        if name in NAMESPACE_PACKAGES:
            assert where.is_dir() and not (where / "__init__.py").exists(), f"{name} must stay a namespace package"
            continue
        assert (where / "__init__.py").is_file(), f"setup.cfg lists {name} but {where} is not a package"


def test_every_entry_point_resolves():
    import importlib
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    targets = []
    for group in cfg["options.entry_points"]:
        for line in cfg["options.entry_points"][group].splitlines():
            if "=" in line:
                name, target = (x.strip() for x in line.split("=", 1))
                targets.append((group, name, target))
    assert ("console_scripts", "tik-migrate", "tbe_compat.cli:tik_migrate_main") in targets
    for group, name, target in targets:
        module, _, attr = target.partition(":")
        obj = importlib.import_module(module)
        for part in filter(None, attr.split(".")):
            obj = getattr(obj, part)
        assert obj is not None, f"{group} {name} -> {target}"
