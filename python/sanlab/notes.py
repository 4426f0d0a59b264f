"""What changes what a figure means, said wherever the figure is shown: on the terminal
(`sanlab run`), in report.html and in the JSON (`--json`, results.json). The engine records it in
the document; this module words it, once for every place."""

from __future__ import annotations

from sanlab.document import Document
from sanlab.replications import batch_notes, replication_note, tail_notes, transient_notes, wide_notes

# Trace options the engine adds when a trace is not replayed as written (the trace reader's
# `out_of_order` and `cut`): each already says what was done.
TRACE_NOTES = ("out_of_order", "cut")


def figure_notes(doc: Document) -> list[str]:
    """One line per fact, with the variants it holds in (all of them: no list)."""
    found: dict[str, list[str]] = {}
    for variant in doc["variants"]:
        for job in variant["jobs"]:
            where = f"job {job['name']} (VM {job['vm']})"
            texts = [f"{where}: {job['options'][key]}" for key in TRACE_NOTES if key in job["options"]]
            if job["read"]["total_ios"] + job["write"]["total_ios"] == 0:
                texts.append(
                    f"{where} completed no I/O in the measured time (it starts, or starts counting, after the "
                    "run ends: fio's startdelay or ramp_time, vdbench's first interval, a trace that begins "
                    "later): its figures are zeros, not a measurement"
                )
            for text in texts:
                found.setdefault(text, []).append(variant["name"])
    every = len(doc["variants"])
    said = [text if len(variants) == every else f"{text} (in {', '.join(variants)})" for text, variants in found.items()]
    replicated = replication_note(doc)
    return [*([replicated] if replicated else []), *batch_notes(doc), *tail_notes(doc), *wide_notes(doc), *transient_notes(doc), *said]
