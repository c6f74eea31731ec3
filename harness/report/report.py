# The HTML report of a results database, drawn with matplotlib in mgpu-tune's embedded Python.
# render(data_json, out_dir) receives what harness/report/report_data.cc gathered (runs, trials,
# the exported best configs with their verification, the virtual device's verdicts) and writes
# out_dir/index.html plus one PNG per picture; it returns a JSON summary (pictures written,
# notes). Every file is drawn in memory first and out_dir made only then: running out of memory
# while drawing (where matplotlib may end the process outright) leaves no folder behind.
# Predicted (cost model) results are always drawn apart from measured ones: dashed lines
# and hollow markers, and the word "predicted".
import html
import io
import json
import os

import matplotlib

matplotlib.use("Agg")
plt = None  # matplotlib.pyplot, imported by render(): its import alone may run out of memory

MEASURED = dict(linestyle="-", marker="o", fillstyle="full")
PREDICTED = dict(linestyle="--", marker="o", fillstyle="none")
MAX_LINES = 10  # convergence lines (run, problem) drawn; the page says how many were left out
MAX_HISTORY = 12  # exported configs drawn in the history
MAX_FAILURES = 200  # virtual-device failures listed; the page says how many were left out


def _style(source):
    return PREDICTED if source == "model" else MEASURED


def _kind(source):
    return "predicted" if source == "model" else ("replayed" if source == "replay" else "measured")


def _save(fig, files, name):
    """The picture's PNG into files[name], written to the folder with the others at the end."""
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    files[name] = png.getvalue()
    return name


def _convergence(d, files):
    """Best-so-far TFLOP/s against the trial number, one line per tuning run and problem."""
    runs = {r["id"]: r for r in d["runs"] if r["kind"] == "tune"}
    lines = {}
    for t in d["trials"]:
        if t["run"] in runs:
            lines.setdefault((t["run"], t["problem"], t["source"]), []).append(t)
    if not lines:
        return None, 0, 0
    fig, ax = plt.subplots(figsize=(8, 4.5))
    shown = sorted(lines.items())[:MAX_LINES]
    for (run, problem, source), trials in shown:
        best, ys = 0.0, []
        for t in trials:
            if t["status"] == "ok" and t["tflops"]:
                best = max(best, t["tflops"])
            ys.append(best if best > 0 else None)
        ax.plot(range(1, len(ys) + 1), ys, markersize=3, label=f"run {run} {problem} ({_kind(source)})",
                **_style(source))
    ax.set_xlabel("trial")
    ax.set_ylabel("best TFLOP/s so far")
    ax.set_title("Tuning convergence")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return _save(fig, files, "convergence.png"), len(shown), len(lines)


def _largest_group(d):
    groups = {}
    for t in d["trials"]:
        if t["status"] == "ok" and t["tflops"]:
            groups.setdefault((t["template"], t["problem"], t["device"], t["source"]), []).append(t)
    if not groups:
        return None, [], 0
    key = max(groups, key=lambda k: (k[3] != "model", len(groups[k])))  # measured first, then the most trials
    return key, groups[key], len(groups)


def _axis_order(v):
    """Numbers in numeric order (32, 64, 128, not 128, 32, 64), before any text, then text."""
    return (0, v, "") if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, 0, str(v))


def _varying(trials):
    """The parameters whose value varies, among those every config has: a group may hold rows of
    several template versions (a knob added later is absent from the older rows' configs)."""
    common = set.intersection(*(set(t["config"]) for t in trials)) if trials else set()
    values = {}
    for t in trials:
        for k, v in t["config"].items():
            if k in common:
                values.setdefault(k, set()).add(v)
    return {k: sorted(v, key=_axis_order) for k, v in values.items() if len(v) > 1}


def _importance(trials, notes):
    """Optuna's fANOVA importance of each varying parameter for the trials' median time."""
    varying = _varying(trials)
    if len(trials) < 8 or not varying:
        notes.append("parameter importance needs at least 8 ok trials with varying parameters")
        return {}
    if len({t["ms"] for t in trials}) < 2:
        # fANOVA divides by the total variance: a plateau (every time equal, as our cost model
        # predicts for many configs) has none, and no parameter explains anything.
        notes.append("parameter importance: every trial has the same time (a plateau), so no parameter matters")
        return {}
    try:
        import optuna
        from optuna.distributions import CategoricalDistribution
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        dists = {k: CategoricalDistribution(v) for k, v in varying.items()}
        study = optuna.create_study(direction="minimize")
        for t in trials:
            params = {k: t["config"][k] for k in varying}
            study.add_trial(optuna.trial.create_trial(params=params, distributions=dists, value=t["ms"]))
        evaluator = optuna.importance.FanovaImportanceEvaluator(seed=0)
        return optuna.importance.get_param_importances(study, evaluator=evaluator)
    except ImportError as e:
        notes.append(f"parameter importance unavailable ({e}): install python3-sklearn")
        return {}
    except (RuntimeError, ValueError, ZeroDivisionError) as e:
        # One picture that cannot be computed is a note, never the end of the whole report.
        notes.append(f"parameter importance not computed ({type(e).__name__}: {e})")
        return {}


def _importance_plot(importance, title, files):
    if not importance:
        return None
    names = list(importance)[::-1]
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(names) + 1.2))
    ax.barh(names, [importance[n] for n in names], color="#4c72b0")
    ax.set_xlabel("fANOVA importance (share of the variance of the median time)")
    ax.set_title(title, fontsize=9)
    return _save(fig, files, "importance.png")


def _landscape(trials, importance, title, files):
    """Best TFLOP/s over the two most important parameters (best over all the others)."""
    varying = _varying(trials)
    axes = [p for p in importance if p in varying][:2] or list(varying)[:2]
    if len(axes) < 2:
        return None
    px, py = axes
    xs, ys = varying[px], varying[py]
    grid = [[float("nan")] * len(xs) for _ in ys]
    for t in trials:
        i, j = ys.index(t["config"][py]), xs.index(t["config"][px])
        if grid[i][j] != grid[i][j] or t["tflops"] > grid[i][j]:
            grid[i][j] = t["tflops"]
    fig, ax = plt.subplots(figsize=(1.2 * len(xs) + 3, 0.7 * len(ys) + 2))
    ax.set_facecolor("#e6e6e6")  # cells no trial reached stay grey
    im = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    ax.set_xlabel(px)
    ax.set_ylabel(py)
    for i in range(len(ys)):
        for j in range(len(xs)):
            if grid[i][j] == grid[i][j]:
                ax.text(j, i, f"{grid[i][j]:.0f}", ha="center", va="center", color="white", fontsize=7)
    fig.colorbar(im, ax=ax, label="best TFLOP/s")
    ax.set_title(title, fontsize=9)
    return _save(fig, files, "landscape.png")


def _history(d, files):
    """Each exported config's median time in every run that measured it, oldest first."""
    series = []
    for e in d["exported"][:MAX_HISTORY]:
        # Timed trials only: a virtual-device verdict is ok without a time.
        points = [t for t in d["trials"] if t["status"] == "ok" and t["ms"] is not None and t["template"] == e["template"]
                  and t["problem"] == e["problem"] and t["device"] == e["device"] and t["config"] == e["config"]]
        if points:
            series.append((e, points))
    if not series:
        return None, 0, 0
    cols = min(3, len(series))
    rows = (len(series) + cols - 1) // cols
    fig, axs = plt.subplots(rows, cols, figsize=(4.2 * cols, 3 * rows), squeeze=False)
    for ax, (e, points) in zip([a for r in axs for a in r], series):
        for source in sorted({p["source"] for p in points}):
            pts = sorted((p for p in points if p["source"] == source), key=lambda p: p["id"])
            ax.errorbar([p["run"] for p in pts], [p["ms"] for p in pts],
                        yerr=[p["ms"] * (p["noise"] or 0) for p in pts], capsize=3, label=_kind(source),
                        **_style(source))
        ax.set_title(f"{e['template']} {e['problem']}\n{e['device']}", fontsize=7)
        runs = sorted({p["run"] for p in points})
        ax.set_xticks(runs, [f"#{r}" for r in runs], fontsize=7)
        ax.set_xlabel("run", fontsize=7)
        ax.set_ylabel("median ms", fontsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    for ax in [a for r in axs for a in r][len(series):]:
        ax.axis("off")
    fig.suptitle("Regression history of the exported configs", fontsize=10)
    return _save(fig, files, "history.png"), len(series), len(d["exported"])


def _shown(shown, total, what):
    """Says on the page when a picture leaves some of the data out."""
    if shown >= total:
        return f"All {total} {what} shown."
    return f"Showing {shown} of {total} {what}."


def _verification(v, esc):
    """The virtual device's verdicts: pass/fail per parameter value, then each failure's report."""
    total = v["passed"] + v["failed"] + v["inconclusive"]
    if total == 0:
        return ("<p>No config was run on the virtual device. <code>mgpu-tune verify matmul</code> (or tuning "
                "with <code>--device model</code>, which verifies each config first) records its verdicts.</p>")
    parts = [f"<p>{total} virtual-device trials: {v['passed']} passed, {v['failed']} failed"
             + (f", {v['inconclusive']} inconclusive (the machine failed: no verdict)" if v["inconclusive"] else "")
             + ". A config passes under every seeded schedule or it fails.</p>"]
    for t in v["templates"]:
        rows = []
        for name in sorted(t["params"]):
            for c in sorted(t["params"][name], key=lambda c: _axis_order(c["value"])):
                cls = " class='fail'" if c["failed"] else ""
                rows.append(f"<tr{cls}><td>{esc(name)}</td><td>{esc(str(c['value']))}</td>"
                            f"<td>{c['passed']}</td><td>{c['failed']}</td></tr>")
        parts.append(f"<h3>{esc(t['template'])}: pass/fail per parameter value</h3>"
                     "<table><tr><th>parameter</th><th>value</th><th>passed</th><th>failed</th></tr>"
                     + "".join(rows) + "</table>")
    failures = v["failures"]
    if failures:
        rows = "".join(
            f"<tr><td><code>{esc(json.dumps(f['config'], sort_keys=True))}</code></td>"
            f"<td>{esc(f['problem'])}<br><small>{esc(f['problem_class'])}</small></td>"
            f"<td class='fail'>{esc(f['status'])}</td><td><pre>{esc(f['message'])}</pre></td></tr>"
            for f in failures[:MAX_FAILURES])
        parts.append("<h3>Failures</h3><p>" + _shown(min(len(failures), MAX_FAILURES), len(failures), "failures")
                     + "</p><table><tr><th>config</th><th>problem (class)</th><th>status</th><th>report</th></tr>"
                     + rows + "</table>")
    return "".join(parts)


def _lints(exported, esc):
    """Each best config's performance lints, with the evidence each rests on."""
    intro = ("<p>What each best config's compiled kernel shows: from its machine code (nvdisasm, recorded "
             "when a tuning run compiled it) and the shared-memory bank conflicts its verification on the virtual "
             "device counted. The cost model charges each lint a penalty; <i>not recorded</i>: neither was kept.</p>")
    rows = "".join(
        f"<tr><td><code>{esc(json.dumps(e['config'], sort_keys=True))}</code></td><td>{esc(e['problem'])}</td>"
        f"<td>{esc(lint['code'])}</td><td>{esc(lint['message'])}</td></tr>"
        for e in exported for lint in e.get("lint_list", []))
    if not rows:
        return intro + "<p>None of the best configs has a recorded lint.</p>"
    return intro + ("<table><tr><th>config</th><th>problem</th><th>lint</th><th>evidence</th></tr>" + rows + "</table>")


def render(data_json, out_dir):
    """The report, or {"failed": ...} when the machine failed it: out of memory (ulimit -v) or a
    file that could not be written (a full disk: its errno). The caller says so in one line and
    removes what was written; any other exception is a bug, reported with its traceback."""
    global plt
    try:
        import matplotlib.pyplot as plt
        return _render(data_json, out_dir)
    except MemoryError:
        _close_figures()  # the figures pyplot still holds: room to say what happened
        return json.dumps({"failed": "memory"})
    except SystemError:
        # A C extension that failed without saying why ("error return without exception set"):
        # under a memory limit (ulimit -v) that is an allocation it could not make.
        import resource
        if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
            raise
        _close_figures()
        return json.dumps({"failed": "memory"})
    except OSError as e:
        _close_figures()
        return json.dumps({"failed": "write", "errno": e.errno or 0, "why": e.strerror or type(e).__name__})


def _close_figures():
    if plt is not None:
        plt.close("all")


def _render(data_json, out_dir):
    d = json.loads(data_json)
    files = {}  # name -> bytes, written together once all are drawn
    notes = []
    pictures = []
    conv, shown, total = _convergence(d, files)
    if conv:
        pictures.append((conv, "Tuning convergence: the best TFLOP/s found so far after each trial, per tuning run "
                               "and problem. Dashed lines with hollow markers are predicted by the cost model, "
                               "not measured. " + _shown(shown, total, "run and problem lines")))
    key, trials, groups = _largest_group(d)
    if key:
        template, problem, device, source = key
        title = f"{template} {problem}\non {device} ({_kind(source)}, {len(trials)} ok trials)"
        of_groups = (f"Drawn for 1 of {groups} groups of ok trials (template, problem, device, source): the one "
                     "with the most trials." if groups > 1 else "")
        importance = _importance(trials, notes)
        land = _landscape(trials, importance, title, files)
        if land:
            pictures.append((land, f"Landscape of {title.replace(chr(10), ' ')}: the best TFLOP/s of any config with these two parameter "
                                   "values (the two most important ones when importance is known); grey cells "
                                   "were not tried. " + of_groups))
        imp = _importance_plot(importance, title, files)
        if imp:
            pictures.append((imp, f"Which parameters matter for {title.replace(chr(10), ' ')}: Optuna's fANOVA "
                                  "importance. " + of_groups))
    hist, shown, total = _history(d, files)
    if hist:
        pictures.append((hist, "Regression history: the median time of each exported config in every run that "
                               "measured it (error bars: the run's noise). Hollow, dashed: predicted. "
                               + _shown(shown, total, "exported configs")))

    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(e['template'])}</td><td>{esc(e['problem'])}</td><td>{esc(e['device'])}</td>"
        f"<td class='{'pred' if e['source'] == 'model' else 'meas'}'>{_kind(e['source'])}</td>"
        f"<td>{esc(e['verification'])}</td><td>{e['ms']:.4f}</td><td>{e['tflops']:.1f}</td>"
        f"<td>{esc(e.get('lints', 'not recorded'))}</td><td><code>{esc(json.dumps(e['config'], sort_keys=True))}</code></td></tr>"
        for e in d["exported"])
    figures = "".join(f"<figure><img src='{esc(name)}' alt='{esc(caption)}'><figcaption>{esc(caption)}</figcaption></figure>"
                      for name, caption in pictures)
    note_html = "".join(f"<li>{esc(n)}</li>" for n in notes)
    measured = sum(1 for t in d["trials"] if t["source"] == "cuda")
    predicted = sum(1 for t in d["trials"] if t["source"] == "model")
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mgpu-tune report: {esc(os.path.basename(d['db']))}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}
h1 {{ font-size: 1.5em; }} table {{ border-collapse: collapse; font-size: 0.85em; }}
td, th {{ border: 1px solid #ccc; padding: 3px 8px; text-align: left; }} th {{ background: #f3f3f3; }}
td.pred {{ color: #a15c00; font-style: italic; }} td.meas {{ color: #1a6b2a; }}
.fail {{ color: #b00020; }} pre {{ white-space: pre-wrap; margin: 0; font-size: 0.8em; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; border: 1px solid #ddd; }}
figcaption {{ font-size: 0.85em; color: #555; max-width: 900px; }} code {{ font-size: 0.8em; }}
.legend {{ background: #fff8e6; border-left: 4px solid #a15c00; padding: 0.5em 1em; font-size: 0.9em; }}
</style></head><body>
<h1>mgpu-tune report: {esc(d['db'])}</h1>
<p>{len(d['runs'])} runs, {len(d['trials'])} trials ({measured} measured on a GPU, {predicted} predicted by the cost
model); generated {esc(d['generated'])} by {esc(d['tool'])}.</p>
<p class="legend">Predicted results come from the analytic cost model: nothing was measured for them. They are
labelled <i>predicted</i> and drawn with dashed lines and hollow markers; measured results are solid.</p>
<h2>Best configs</h2>
<p>Verification: <i>hardware</i> (compared with cuBLAS on the GPU), <i>virtual</i> (passed on the virtual device
for its kernel and problem class), <i>none</i>. A config the virtual device failed never ranks.</p>
<table><tr><th>template</th><th>problem</th><th>device</th><th>source</th><th>verification</th><th>median ms</th><th>TFLOP/s</th><th>lints</th><th>config</th></tr>
{rows}</table>
{('<p class="fail">' + esc(d['skipped_failed_verification']) + '</p>') if d['skipped_failed_verification'] else ''}
<h2>Performance lints</h2>
{_lints(d['exported'], esc)}
<h2>Verification on the virtual device</h2>
{_verification(d['verification'], esc)}
<h2>Pictures</h2>
{figures or '<p>No ok trials to draw.</p>'}
{('<h2>Notes</h2><ul>' + note_html + '</ul>') if notes else ''}
</body></html>
"""
    files["index.html"] = page.encode("utf-8")
    os.makedirs(out_dir, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
    return json.dumps({"pictures": [name for name, _ in pictures], "notes": notes})
