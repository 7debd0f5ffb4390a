"""The Performance page's figures, written from bench/results/*.json and nothing else.

Each block starts with the result file it comes from, the commit it was measured at
(older files predate that field and say so), the command and the load average, so
no figure on the page stands without its source. Numbers are rounded here, once
(52.47 prints as 52, never 53).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import quoted

RESULTS = Path(__file__).resolve().parent / "results"


def load(name: str) -> dict[str, Any]:
    return json.loads((RESULTS / f"{name}.json").read_text())


def source(name: str, doc: dict[str, Any]) -> str:
    """One line naming where the figures below come from."""
    code = doc.get("code") or {}
    commit = code.get("git_commit")
    _, date, _ = quoted.age(name)
    when = f" of {date}" if date else ""
    at = f"commit `{commit[:12]}{'-dirty' if commit.endswith('-dirty') else ''}`{when}" if commit else \
        "no commit recorded: measured before result files kept it"
    load_avg = doc["load_average"]
    machine = doc["machine"]
    return (f"*Source: `bench/results/{name}.json` ({at}; `{doc['command']}`; {machine['cpu_model']}, "
            f"{machine['cores']} cores; load average {load_avg['start']:g} at start, {load_avg['max_sampled']:g} at most).*")


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def count(n: int, total: int) -> str:
    return f"{n} of {total}"


def visibility_accuracy() -> str:
    doc = load("visibility_accuracy")
    f = doc["figures"]
    names = {"ours_1ray": "ours, 1 ray per pixel (the default)", "dysm_published": "DYSM vertices, as published",
             "dysm_all_blockers": "DYSM vertices, all blockers", "clevr_200px": "CLEVR, >= 200 visible pixels"}
    levels = sorted(f["decisions"], key=float)
    rows = []
    for key, label in names.items():
        err = f["errors"].get(key)
        if err:
            signed = "" if key == "ours_1ray" else f"; {err['mean_signed_error_occluded']:+.3f} on average"
            mean = f"{err['mean_abs_error']:.4f} ({err['mean_abs_error_occluded']:.4f}{signed})" if key == "ours_1ray" \
                else f"{err['mean_abs_error']:.3f} ({err['mean_abs_error_occluded']:.3f}{signed})"
            worst = f"{err['max_abs_error']:.3f}" if key == "ours_1ray" else f"{err['max_abs_error']:.2f}"
        else:
            mean, worst = "(no fraction)", ""
        accepts = " / ".join(count(f["decisions"][lv]["methods"][key]["accepted_violating"],
                                   f["decisions"][lv]["violating_scenes"]) for lv in levels)
        rejects = " / ".join(count(f["decisions"][lv]["methods"][key]["rejected_meeting"],
                                   f["decisions"][lv]["meeting_scenes"]) for lv in levels)
        rows.append([label, mean, worst, accepts, rejects])
    shown = " / ".join(levels)
    skipped = f.get("infeasible_skipped", 0)
    intro = (f"{f['scenes']} generated counting scenes, {doc['settings']['resolution']}, {f['objects']:,} objects, "
             f"{f['occluded_objects']} of them occluded"
             + (f" ({skipped} infeasible scene{'s' if skipped > 1 else ''} skipped and replaced)." if skipped else "."))
    return "\n\n".join([source("visibility_accuracy", doc), intro, table(
        ["method", "mean abs. error (occluded objects)", "max abs. error", f"accepts a scene violating {shown}",
         f"rejects a scene meeting {shown}"], rows)])


def visibility_speed() -> str:
    doc = load("visibility_speed")
    rows = doc["figures"]["rows"]
    resolutions = doc["settings"]["resolutions"]
    body = []
    for n in doc["settings"]["object_counts"]:
        cells = [str(n)]
        for res in resolutions:
            r = next(r for r in rows if r["objects"] == n and r["resolution"] == res)
            cells.append(f"{r['raycast']['wall_s']:.3f} s / {r['blender']['wall_s']:.2g} s ({r['ratio_wall']:.0f}x)"
                         if r["blender"]["wall_s"] < 10 else
                         f"{r['raycast']['wall_s']:.3f} s / {r['blender']['wall_s']:.1f} s ({r['ratio_wall']:.0f}x)")
        body.append(cells)
    worst = max(r["blender"]["max_abs_fraction_difference"] for r in rows)
    rays = [r["raycast"]["rays_cast"] for r in rows]
    rate = [r["raycast"]["rays_per_s"] for r in rows]
    note = (f"The two routes' fractions agree to {worst:.0e} or better. The ray cast shoots only the rays of each "
            f"object's projected box: {min(rays):,}-{max(rays):,} rays per scene, {min(rate) / 1e6:.1f}-"
            f"{max(rate) / 1e6:.1f} million rays per second.")
    headers = ["objects", f"{resolutions[0]}: ray cast / Blender", *resolutions[1:]]
    return "\n\n".join([source("visibility_speed", doc), table(headers, body), note])


def render_quality() -> str:
    doc = load("render_quality")
    f = doc["figures"]
    rows = [[str(s["samples"]), "on" if s["denoise"] else "off", f"{s['psnr_db_min']:.1f}", f"{s['ssim_min']:.3f}",
             f"{s['render_s_median']:.1f}", f"{s['cpu_s_median']:.1f}"] for s in f["settings"]]
    chosen, published = f["chosen"], f["published"]
    refs = [r["render_s"] for r in f["reference"]]
    note = (f"Chosen ({chosen['rule']}): {chosen['samples']} samples with OIDN {'on' if chosen['denoise'] else 'off'}, "
            f"{chosen['cheaper_than_published_wall']:.1f}x less wall time ({chosen['cheaper_than_published_cpu']:.1f}x "
            f"less CPU time) than the published generator's {published['setting']}, PSNR {chosen['psnr_db_min']:.1f} "
            f"vs {published['psnr_db_min']:.1f} dB. PSNR alone ({f['chosen_psnr_only']['rule']}) would pick "
            f"{f['chosen_psnr_only']['samples']} samples without denoising (SSIM {f['chosen_psnr_only']['ssim_min']:.2f}). "
            + (f"The {doc['settings']['reference_samples']}-sample references took {min(refs):.0f}-{max(refs):.0f} s each."
               if len(refs) > 1 else f"The {doc['settings']['reference_samples']}-sample reference took {refs[0]:.0f} s."))
    return "\n\n".join([source("render_quality", doc), table(
        ["samples", "OIDN", "PSNR dB", "SSIM", "render call s", "CPU s"], rows), note])


def pipeline_overhead(name: str = "pipeline_overhead") -> str:
    doc = load(name)
    f = doc["figures"]
    modes = {"inline": "composed in its turn", "ahead": "composed ahead (batch default)"}
    labels = {"compose_and_visibility": "compose and visibility", "scene_build_and_passes": "Blender scene build and pass files",
              "render_call": "Cycles render call", "write": "write item folder", "wall_s": "item wall time"}
    rows = [[label, *(f"{f[mode]['median_seconds'][key]:.3g}" for mode in modes)] for key, label in labels.items()]
    rows.append(["outside the render call (pooled)", *(f"{100 * f[mode]['outside_render_share_pooled']:.1f} %" for mode in modes)])
    rows.append(["outside the render call (median, worst item)",
                 *(f"{100 * f[mode]['outside_render_share_median']:.1f} %, {100 * f[mode]['outside_render_share_max']:.1f} %"
                   for mode in modes)])
    batch = f["batch"]
    r = doc["settings"]["render"]
    note = (f"{doc['settings']['items']} items of {doc['settings']['preset']} at {r['width']}x{r['height']}, "
            f"{r['samples']} samples, {doc['settings'].get('rounds', 1)} round(s) of both ways in one process (order "
            f"alternating); median seconds. The items' total wall time: "
            f"{f['inline']['item_wall_s_total']:.1f} s composed in turn, {f['ahead']['item_wall_s_total']:.1f} s composed "
            f"ahead (ratio {f['wall_ratio_inline_over_ahead']:.2f}). In the ahead column the "
            "composition ran on a thread during the previous item's render, so it is not part of the item's wall time.")
    if batch:
        note += (f" The whole {batch['items']}-item demo batch through `stim3d render --workers 1` spends "
                 f"{100 * batch['outside_render_share']:.0f} % outside the render calls (process start and the bpy "
                 f"import, paid once per batch).")
    return "\n\n".join([source(name, doc), table(["stage", *modes.values()], rows), note])


def mask_agreement() -> str:
    doc = load("mask_agreement")
    f = doc["figures"]
    worst = f["worst_item"]
    replaced = f" ({f['infeasible_skipped']} infeasible at this size replaced)" if f["infeasible_skipped"] else ""
    text = (f"{f['items']} items of the DYSM preset{replaced}, "
            f"{doc['settings']['render']['width']}x{doc['settings']['render']['height']}, "
            f"{doc['settings']['render']['samples']} samples: Blender's object-index pass (mask.png) equals the "
            f"ray-cast instance map on {100 * f['agreement_pooled']:.4f} % of {f['pixels']:,} pixels "
            f"({f['differing_px']} differ); {f['items_identical']} items are identical and the worst "
            f"({worst['item']}) agrees on {100 * worst['agreement']:.4f} % ({worst['differing_px']} pixels). "
            f"Pixels off silhouette edges that differ: {f['differing_px_off_edges']}.")
    return "\n\n".join([source("mask_agreement", doc), text])


def batch_memory() -> str:
    doc = load("batch_memory")
    f = doc["figures"]
    s = doc["settings"]
    failed = f" ({f['failed_items']} of the {f['items']} failed)" if f["failed_items"] else ""
    text = (f"One worker, never recycled, {f['items']} counting items at {s['width']}x{s['height']}, {s['samples']} "
            f"samples{failed}: "
            f"resident memory "
            f"{f['rss_first_mb']:.0f} MB after the first item, {f['rss_last_mb']:.0f} MB after the last, "
            f"{f['rss_max_mb']:.0f} MB at most; its trend was {f['slope_mb_per_100_items_first_half']:+.0f} MB per 100 "
            f"items over the first half and {f['slope_mb_per_100_items_second_half']:+.0f} MB per 100 items over the "
            f"second (every tenth item: {', '.join(f'{v:.0f}' for v in f['rss_every_10_items_mb'])} MB). "
            f"`--recycle-after` remains the guard for whatever a future change leaks.")
    return "\n\n".join([source("batch_memory", doc), text])


def batch_throughput() -> str:
    doc = load("batch_throughput")
    runs = doc["figures"]["runs"]
    s = doc["settings"]
    parts = [f"{r['workers']} worker(s): {r['items_per_minute']:.1f} items per minute "
             f"(outside the render call {100 * r['outside_render_share_per_item_median']:.1f} % of an item's time, median)"
             for r in runs]
    text = (f"{s['width']}x{s['height']}, {s['samples']} samples, OIDN; {s['items']} items in {s['rounds']} rounds "
            f"that alternate the order: " + "; ".join(parts) + ".")
    return "\n\n".join([source("batch_throughput", doc), text])


def item_overhead() -> str:
    doc = load("item_overhead")
    f, s = doc["figures"], doc["settings"]
    item, blender = f["item_seconds_median"], f["blender"]
    proof = f["determinism"]
    ms = {k: 1000 * v for k, v in blender.items()}
    saves = ms["reset_s"] + ms["build_after_reset_s"] - ms["clear_s"] - ms["build_after_clear_s"]  # reset vs clear
    verdict = "every file identical" if proof["holds"] else "files differ: " + ", ".join(proof["differing"])
    text = (f"{proof['items']} items of `{s['preset']}` at {s['render']['width']}x{s['render']['height']} "
            f"({s['render']['samples']} samples), Blender steps timed {s['repeats']} times each; an item takes {item:.2f} s all-in "
            f"(`render_item`, median). Factory reset {ms['reset_s']:.0f} ms ({100 * ms['reset_s'] / 1000 / item:.1f} % "
            f"of an item), scene build after it {ms['build_after_reset_s']:.1f} ms; clearing the datablocks instead "
            f"of the reset {ms['clear_s']:.2f} ms, then the build {ms['build_after_clear_s']:.1f} ms. Reuse could "
            f"save at most {saves:.0f} ms per item ({100 * saves / 1000 / item:.1f} %), less whatever it still had to "
            f"reset by hand. Order proof: {proof['files_compared']} files "
            f"of {proof['items']} items rendered in plan order and in reverse order in one process: {verdict}.")
    rows = [[str(r["level"]) + (" (Pillow's default, used)" if r["level"] == f["png_default_level"] else ""),
             f"{r['median_bytes'] / 1000:,.0f} kB", f"{1000 * r['median_seconds']:.1f} ms"] for r in f["png"]]
    return "\n\n".join([source("item_overhead", doc), text,
                         table(["image.png zlib level", "median size", "median encode time"], rows)])


def render_settings() -> str:
    doc = load("render_settings")
    f, s = doc["figures"], doc["settings"]
    rows = [[v["variant"], f"{v['psnr_db_min']:.1f}", f"{v['ssim_min']:.4f}", f"{v['render_s_median']:.2f}",
             f"{v['scene_s_median']:.2f}", f"{v['speedup_vs_baseline_render']:.2f}x",
             f"{v['speedup_vs_baseline_cpu']:.2f}x"] for v in f["variants"]]
    chosen = next((v for v in f["variants"] if v["variant"] == f["chosen"]), None)
    families = ", ".join(scene.rsplit("-", 2)[0] for scene in s["scenes"])
    rounds = f.get("rounds_completed", s["rounds"])
    note = (f"One scene per family ({families}) at {s['resolution']} against a {s['reference_samples']}-sample "
            f"reference; {rounds} round(s), the variants' order rotating. PSNR and SSIM are the minimum over the "
            f"scenes; seconds are medians (render_scene: Blender's reset, the scene build, the render call and the "
            f"pass files); \"x baseline\" is the median of each render's paired ratio to the baseline "
            f"({s['baseline']}) rendered in the same round and scene, so load drift cancels.")
    if chosen:
        note += (f" Fastest meeting PSNR >= {s['target_psnr_db']:g} dB and SSIM >= {s['target_ssim']:g} on every "
                 f"scene: {chosen['variant']}, {chosen['speedup_vs_baseline_render']:.2f}x the baseline's render call "
                 f"(PSNR {chosen['psnr_db_min']:.1f} dB, SSIM {chosen['ssim_min']:.4f}).")
    return "\n\n".join([source("render_settings", doc), table(
        ["variant", "PSNR min dB", "SSIM min", "render call s", "render_scene s", "x baseline (render call)",
         "x baseline (CPU)"], rows),
        note])


def throughput(name: str = "throughput") -> str:
    doc = load(name)
    f, s = doc["figures"], doc["settings"]
    r = s["render"]
    rows = [[x["config"], f"{x['items_per_minute']:.2f}", str(x["cores_busy"]), f"{x['items_per_minute_per_core']:.2f}",
             f"{x['seconds_per_item_all_in']:.1f}", f"{x['render_call_s_median']:.1f}",
             f"{100 * x['outside_render_share_per_item_median']:.1f} %"] for x in f["runs"]]
    m = f["cost_model"]
    hours = ", ".join(f"{k}: {v:g} h" for k, v in m["wall_hours_per_100k_items"].items())
    efficiency = (f" Two Ray nodes render {m['ray_2_node_scaling_efficiency']:.2f} of twice one node's rate."
                  if m.get("ray_2_node_scaling_efficiency") else "")
    note = (f"{s['items_per_run']} dysm3d items per run (every family) at {r['width']}x{r['height']}, {r['samples']} "
            f"samples, OIDN {'on' if r['denoise'] else 'off'}, device {r['device']}; {s['rounds']} rounds alternating "
            f"the order. Cost model: {m['items_per_minute_per_core']:.2f} items per minute per core "
            f"({m['best_config']}), so 100,000 items take {m['core_hours_per_100k_items']:,.0f} core-hours ({hours}); "
            f"the {m['preset_items']}-item preset on this machine: "
            f"{m.get('preset_minutes_per_config', {}).get('local-1', float('nan')):.1f} min "
            f"with one local worker (`stim3d render`'s default), {m['preset_minutes_on_this_machine']:.1f} min at the "
            f"rate of {m['fastest_config']} (upper bounds: a run here pays worker start and the bpy import once per "
            f"{s['items_per_run']} items, the preset once per worker)."
            + efficiency)
    return "\n\n".join([source(name, doc), table(
        ["config", "items/min", "cores busy", "items/min per core", "s per item, all-in", "render call s (median)",
         "outside the render call (median per item)"], rows), note])


def gallery_scale() -> str:
    doc = load("gallery_scale")
    parts = [f"{int(n):,} items: first build {v['first_build_s']:.0f} s, rebuild {v['rebuild_s']:.1f} s, "
             f"after one item was re-rendered {v['one_changed_s']:.1f} s ({v['thumbs_made_after_change']} thumbnail remade)"
             for n, v in sorted(doc["figures"].items(), key=lambda kv: int(kv[0]))]
    return "\n\n".join([source("gallery_scale", doc), "; ".join(parts) + "."])


def full_preset() -> str:
    doc = load("full_preset")
    f = doc["figures"]
    worker = f["seconds_per_item_in_worker"]
    baselines = ", ".join(f"{b['question_type'].split(' ')[0]} {b['accuracy']:.3f} ({b['distinct_answers']} answers)"
                          for b in f["constant_baseline"])
    text = (f"`{doc['settings']['preset']}` with {doc['settings']['workers']} worker (`stim3d render`'s default): "
            f"{f['rendered']} of {f['items']} items rendered, {f['failed']} failed, in "
            f"{f['wall_minutes_end_to_end']:.1f} min end to end ({f['seconds_per_item_all_in']:.2f} s per item all-in: "
            f"process start, composition, visibility, scene build, render, denoise, writing; goal 30 min, 3.6 s per "
            f"item). In the worker: median {worker['median']:.2f} s per item, p95 {worker['p95']:.2f} s, worst "
            f"{worker['max']:.2f} s. Best constant answer per question type: {baselines}.")
    return "\n\n".join([source("full_preset", doc), text])


def readme_summary() -> str:
    """The README's two-sentence Performance summary, from the same files as the page."""
    accuracy = load("visibility_accuracy")["figures"]["errors"]["ours_1ray"]
    ratios = [r["ratio_wall"] for r in load("visibility_speed")["figures"]["rows"]]
    chosen = load("render_quality")["figures"]["chosen"]
    settings = load("render_settings")["figures"]
    preset = next(v for v in settings["variants"] if v.get("render_settings"))
    whole = load("full_preset")["figures"]
    return (f"The whole {whole['items']}-item DYSM 3D preset at 800x600 renders in {whole['wall_minutes_end_to_end']:.1f} "
            f"minutes end to end on two CPU cores ({whole['seconds_per_item_all_in']:.2f} s per item, everything "
            f"included). {suite_sentence()} Ray-cast visibility is within {accuracy['mean_abs_error']:.4f} on average of a 4x4-rays-per-pixel "
            f"reference and {min(ratios):.0f}-{max(ratios):.0f} times faster than getting the same fractions from "
            f"Blender; the DYSM preset renders at {preset['samples']} samples with OIDN's fast mode and no light tree, "
            f"{preset['speedup_vs_baseline_render']:.1f}x less render time than {chosen['samples']} samples with OIDN "
            f"(itself {chosen['cheaper_than_published_wall']:.1f}x less than the published generator's 128 samples), "
            f"at PSNR above {int(preset['psnr_db_min'])} dB and SSIM >= {preset['ssim_min'] // 0.001 / 1000:.3f} "
            f"against a high-sample "
            f"reference on every family. Batches scale over local workers and Ray nodes (a node lost mid-batch "
            f"costs only the time of its item, tested in CI); items per minute per core and what 100,000 items cost "
            f"are on the same page. {measured_between()} Every figure, with the result file, commit, machine and load "
            f"it comes from: [docs/performance.md](docs/performance.md).")


def measured_between() -> str:
    """When the summary's figures were measured: the dates of their result files and the oldest one's age."""
    ages = [quoted.age(name) for name in ("visibility_accuracy", "visibility_speed", "render_quality",
                                          "render_settings", "full_preset", "full_suite")]
    dates = sorted(date for _, date, _ in ages if date)
    if not dates:
        return ""
    span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    return (f"These figures were measured {span}, each at the commit its page names (`python -m bench.quoted` "
            f"says how many commits to the renderer and scene model each is behind; CI fails past "
            f"{quoted.MAX_BEHIND}; `python -m bench.release` measures them all again).")

def grown_since(all_runs: dict) -> dict[str, int]:
    """Presets that plan more items now than the suite runs rendered of them, with how many more: a preset given new
    tasks after its run (its counted part says complete, for the plan it had then)."""
    from stim3d.render.batch.suite import SUITE_PRESETS

    counted = {p["preset"]: p["rendered"] for p in all_runs["presets"]}
    return {name: preset_items(name) - counted[name] for name in SUITE_PRESETS
            if name in counted and preset_items(name) > counted[name]}


def suite_sentence() -> str:
    """What the README says of the full Cycles suite: its total when complete, how far it got otherwise, and by how
    much the presets have grown since it was rendered."""
    from stim3d.render.batch.suite import SUITE_PRESETS

    runs = load("full_suite")["figures"]
    done = runs["all_runs"]
    planned = sum(preset_items(name) for name in SUITE_PRESETS)
    hours = f"{done['wall_seconds'] / 3600:.1f} h of wall time on the same machine"
    grown = grown_since(done)
    if runs["complete"] and not grown:
        return (f"The whole seed suite, all {len(SUITE_PRESETS)} presets ({planned:,} images, each at its preset's "
                f"size and settings), rendered with Cycles in {hours}, 0 failed, over {done['runs']} runs.")
    if runs["complete"]:
        more = ", ".join(f"{name} by {n:,}" for name, n in grown.items())
        return (f"The whole seed suite as its {len(SUITE_PRESETS)} presets stood then ({done['rendered']:,} images, "
                f"each at its preset's size and settings) rendered with Cycles in {hours}, 0 failed, over "
                f"{done['runs']} runs; the presets have since grown ({more}) to {planned:,} images, whose new tasks "
                f"were rendered apart (docs/performance.md).")
    finished = sum(1 for p in done["presets"] if p["complete"])
    return (f"The whole seed suite ({len(SUITE_PRESETS)} presets, {planned:,} images) is being rendered with Cycles "
            f"over several runs: {finished} of {len(SUITE_PRESETS)} presets complete, {done['rendered']:,} images so "
            f"far in {hours}.")


# preset -> (results file, scene, the detail figures that scene's questions depend on) for "Cycles settings per family"
FAMILY_SETTINGS = {
    "oddgrid3d": ("looks_settings_oddgrid_studio_640x480", "oddgrid", ("odd_de", "label_contrast", "label_ssim")),
    "rose3d": ("looks_settings_studio_640x480", "rose", ("glossy_highlight",)),
    "ava3d": ("looks_settings_studio_640x480", "ava", ("thin_parts_ssim_min", "colour_de_max")),
    "rubrics3d": ("looks_settings_studio_640x480", "rubrics", ("object_ssim_min", "colour_de_max")),
}


def family_settings() -> str:
    """Per 640x480 preset: every candidate on its family's scene, the detail it depends on, and the preset's choice."""
    from stim3d.render.batch.config import load_config
    from stim3d.scenes.presets import preset_path

    parts = []
    for preset, (name, scene, keys) in FAMILY_SETTINGS.items():
        doc = load(name)
        settings = load_config(preset_path(preset)).render.model_dump(mode="json")  # type: ignore[arg-type]
        rows = []
        for r in (r for r in doc["figures"]["rows"] if r["scene"] == scene):
            fields = {"denoise_quality": "high", "light_tree": True,  # RenderSettings' defaults, unless the run set them
                      **doc["settings"]["candidates"][r["candidate"]]}
            chosen = all(settings[k] == v for k, v in fields.items())
            detail = ", ".join(f"{k} {r['detail'][k]}" + (f" (ref. {r['detail'][k + '_reference']})"
                                                          if k + "_reference" in r["detail"] else "")
                               for k in keys if k in r["detail"])
            passes = r["psnr"] >= doc["settings"]["target_psnr_db"] and r["ssim"] >= doc["settings"]["target_ssim"]
            rows.append([f"**{r['candidate']}**" if chosen else r["candidate"], f"{r['seconds']:.2f}",
                         f"{r['psnr']:.1f}", f"{r['ssim']:.4f}", f"{r['ssim_ceiling']:.4f}", detail,
                         "yes" if passes else "no"])
        item = next(r["item_id"] for r in doc["figures"]["rows"] if r["scene"] == scene)
        parts += [f"**{preset}** ({scene} scene `{item}`, {doc['settings']['resolution']}, "
                  f"{doc['settings']['reference_samples']}-sample reference). " + source(name, doc),
                  table(["candidate (+ OIDN)", "s / item", "PSNR dB", "SSIM", "SSIM ceiling", "fine detail", "bar"],
                        rows)]
    parts.append("In bold, each preset's setting now; \"(oddgrid3d/rose3d/ava3d presets)\" names those presets' "
                 "setting when these runs were made (and rubrics3d's).")
    return "\n\n".join(parts)


def preset_items(name: str) -> int:
    """How many items the shipped preset `name` plans."""
    from stim3d.render.batch.config import load_config
    from stim3d.render.batch.plan import expand
    from stim3d.scenes.presets import preset_path

    return len(expand(load_config(preset_path(name))))  # type: ignore[arg-type]


def suite_sample() -> str:
    """Every N-th item of every seed preset through `stim3d render all`, and each preset's time at that rate."""
    doc = load("full_suite_sample100")
    f = doc["figures"]
    rows, total_items, total_seconds = [], 0, 0.0
    for r in f["presets"]:
        items = preset_items(r["preset"])
        seconds = items * r["seconds_per_item"]
        total_items, total_seconds = total_items + items, total_seconds + seconds
        rows.append([r["preset"], f"{items:,}", str(r["rendered"]), str(r["failures"]), f"{r['seconds_per_item']:.2f}",
                     f"{seconds / 3600:.1f} h"])
    rows.append(["all", f"{total_items:,}", str(f["total"]["rendered"]), str(f["total"]["failed"]),
                 f"{total_seconds / total_items:.2f}", f"{total_seconds / 3600:.1f} h"])
    workers = doc["settings"]["workers"]
    return "\n\n".join([source("full_suite_sample100", doc), table(
        ["preset", "items in the preset", "sampled", "failed", f"s per item ({workers} workers, all-in)",
         "preset at that rate"], rows)])


def suite_full() -> str:
    """The full Cycles suite over one or more runs (and roots): per preset, the root that got furthest with it."""
    from stim3d.render.batch.suite import SUITE_PRESETS

    doc = load("full_suite")
    f = doc["figures"]
    summed = {r["preset"]: r for r in f["all_runs"]["presets"]}
    rows = []
    for name in SUITE_PRESETS:
        items = preset_items(name)
        done = summed.get(name)
        if not done or not done["rendered"]:
            rows.append([name, f"{items:,}", "0", "-", "-", "-", "-"])
            continue
        rows.append([name, f"{items:,}", f"{done['rendered']:,}", str(done["failures"]),
                     f"{done['wall_seconds'] / 60:.0f} min", f"{done['seconds_per_item']:.2f}",
                     ", ".join(f"`{c[:12]}`" for c in done["commits"])])
    runs = f["runs"]
    roots = {r["root"] for r in runs}
    stopped = [r for r in runs if r.get("stopped_in")]
    counted = sum(p["runs"] for p in summed.values())
    dropped = sum(figures["rendered"] for r in runs for name, figures in r["presets"].items()
                  if summed[name]["root"] != r["root"])
    grown = grown_since(f["all_runs"])
    state = ("complete: every planned item rendered, 0 failed" if f["complete"] and not grown else
             "complete for the presets as they were planned then, 0 failed; since grown: "
             + ", ".join(f"{name} by {n:,} items" for name, n in grown.items()) if f["complete"] else
             f"not complete: the last run stopped in {runs[-1]['stopped_in']}" if runs[-1].get("stopped_in")
             else "not complete")
    summary = (f"{len(runs)} run(s) in {len(roots)} root(s), {counted} preset part(s) counted; "
               f"{f['all_runs']['rendered']:,} items rendered in {f['all_runs']['wall_seconds'] / 3600:.2f} h of wall "
               f"time ({f['all_runs']['seconds_per_item']:.2f} s per item); {len(stopped)} stopped by `--stop-after`; "
               f"{state}.")
    summary += " Runs: " + "; ".join(
        f"`{r['commit'][:12]}` in `{r['root']}`, {r['wall_seconds'] / 60:.0f} min, load average "
        f"{r['load_average']['start']:g} at start, {r['load_average']['max_sampled']:g} at most" for r in runs) + "."
    if dropped:
        summary += (f" Not counted: {dropped:,} items rendered in a root that a later one overtook for the same "
                    "preset (a machine not kept took its root).")
    return "\n\n".join([source("full_suite", doc), table(
        ["preset", "items in the preset", "rendered", "failed", "wall time", "s per item (all-in)", "commits"],
        rows), summary])


BLOCKS = {
    "perf-visibility-accuracy": visibility_accuracy,
    "perf-visibility-speed": visibility_speed,
    "perf-render-quality": render_quality,
    "perf-pipeline-overhead": pipeline_overhead,
    "perf-mask-agreement": mask_agreement,
    "perf-batch-memory": batch_memory,
    "perf-batch-throughput": batch_throughput,
    "perf-gallery-scale": gallery_scale,
    "perf-readme-summary": readme_summary,
    "perf-full-preset": full_preset,
    "perf-render-settings": render_settings,
    "perf-family-settings": family_settings,
    "perf-suite-sample": suite_sample,
    "perf-suite-full": suite_full,
    "perf-throughput": throughput,
    "perf-item-overhead": item_overhead,
    "perf-pipeline-overhead-dysm3d": lambda: pipeline_overhead("pipeline_overhead_dysm3d"),
    "perf-throughput-workers": lambda: throughput("throughput_workers"),
}
