"""Copy the embedded Python's standard library and the dist-packages Optuna needs into a
bundle folder, laid out as a Python home (MGPU_PYTHON_HOME):
    HOME/lib/python3.11/...            the standard library and lib-dynload
    HOME/lib/python3/dist-packages/... optuna and every package it imports
Run with Debian's /usr/bin/python3.11 (the interpreter mgpu-tune embeds):
    /usr/bin/python3.11 scripts/bundle_python.py OUT_HOME
Only the extension modules (lib-dynload) that the exercise below loads are copied. Prints, one
per line, the extension modules copied, so the caller can collect the shared libraries they
link."""
import os
import shutil
import sys
import sysconfig

# Installed for the HTML report, which runs on workstations, not on the GPU machines; Optuna's
# strategies work without them (it imports them only when present).
SKIP_PACKAGES = {"scipy", "sklearn", "matplotlib", "mpl_toolkits", "PIL", "joblib", "threadpoolctl", "kiwisolver",
                 "fontTools", "cycler", "pyparsing", "contourpy"}
SKIP_STDLIB = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pydoc_data",
               "__pycache__", "unittest"}


def exercise_optuna():
    # Import what the strategies use, and run a tiny study, so that lazily imported
    # modules are loaded too and their packages get copied.
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for sampler in (optuna.samplers.TPESampler(seed=0), optuna.samplers.CmaEsSampler(seed=0),
                    optuna.samplers.RandomSampler(seed=0)):
        study = optuna.create_study(sampler=sampler)
        study.optimize(lambda t: (t.suggest_int("x", 0, 8) - 3) ** 2, n_trials=12)


def main(out_home):
    stdlib = sysconfig.get_paths()["stdlib"]  # /usr/lib/python3.11
    dst_std = os.path.join(out_home, "lib", "python3.11")
    exercise_optuna()
    loaded = {os.path.realpath(getattr(m, "__file__", None) or "") for m in list(sys.modules.values())}
    dynload = os.path.join(stdlib, "lib-dynload")

    def ignore(d, names):
        skip = [n for n in names if n in SKIP_STDLIB or n.startswith("config-3.11")]
        if os.path.realpath(d) == os.path.realpath(dynload):
            skip += [n for n in names if os.path.realpath(os.path.join(d, n)) not in loaded]
        return skip

    shutil.copytree(stdlib, dst_std, dirs_exist_ok=True, ignore=ignore)
    dist = "/usr/lib/python3/dist-packages"
    dst_dist = os.path.join(out_home, "lib", "python3", "dist-packages")
    tops = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None) or ""
        if f.startswith(dist + "/"):
            tops.add(os.path.relpath(f, dist).split(os.sep)[0])
    for top in sorted(tops - SKIP_PACKAGES):
        src = os.path.join(dist, top)
        dst = os.path.join(dst_dist, top)
        if os.path.isdir(src):
            shutil.copytree(src, dst, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "tests", "testing"))
        else:
            os.makedirs(dst_dist, exist_ok=True)
            shutil.copy2(src, dst)
    # numpy and others keep their private shared libraries beside the package.
    for name in os.listdir(dist):
        if name.endswith(".libs") and name.split(".")[0] in tops - SKIP_PACKAGES:
            shutil.copytree(os.path.join(dist, name), os.path.join(dst_dist, name), dirs_exist_ok=True)
    for root, _, files in os.walk(out_home):
        for f in files:
            if f.endswith(".so"):
                print(os.path.join(root, f))


if __name__ == "__main__":
    main(sys.argv[1])
