"""`stim3d.provenance`, kept importable: the code lives in render/provenance.py, next to the pipeline it serves.

Item provenance and the code identity of batch.json belong to rendering (the batch
driver, `render_item`, sweeps, merge); this name stays so that scripts and plug-ins
that import `stim3d.provenance` keep working.
"""

from stim3d.render.provenance import (
    LIBRARIES,
    code_identity,
    family_distributions,
    family_revisions,
    git_commit,
    library_versions,
    shared_revisions_of,
)

__all__ = ["LIBRARIES", "code_identity", "family_distributions", "family_revisions", "git_commit", "library_versions", "shared_revisions_of"]
