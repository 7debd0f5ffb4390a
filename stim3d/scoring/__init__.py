"""The reference scoring core: parse model responses, score them against hand-off records, report.

`answers` (one table row per answer type: protocol, default rule, parser, gold text),
`parsers` (response -> canonical answer), `rules` (exact, count SOFT, cell tolerance,
cell distance, set F1), `report` (`stim3d score`), `cores` (delivery of records to a
scoring core at the end of `stim3d render`). Depends only on the record model.
"""
