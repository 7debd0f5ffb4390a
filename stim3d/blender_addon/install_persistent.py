"""Install the stim3d extension zip and enable it for every later Blender session.

Why: `bpy.ops.extensions.package_install_files(..., enable_on_install=True)` enables
the extension in the running session only; unless the preferences are saved (desktop
Blender saves them on quit only when "Auto-Save Preferences" is on, a background
session never does), the next session starts with it disabled. This script enables
it with `addon_utils.enable(..., default_set=True, persistent=True)` and saves the
preferences, so it stays enabled.

    blender --background --python blender_addon/install_persistent.py -- dist/stim3d-<version>-<platform>.zip

(The interactive route, Edit > Preferences > Get Extensions > Install from Disk,
ticks the extension and saves the preferences itself when Auto-Save is on; otherwise
use the menu's *Save Preferences*.) The script is shipped in the zip too, but Blender
never imports it: it runs only as __main__.
"""

from __future__ import annotations

import sys

REPO = "user_default"
MODULE = f"bl_ext.{REPO}.stim3d"


def install_persistently(zip_path: str) -> bool:
    """Install, enable persistently and save the preferences; True when the extension is enabled."""
    import bpy  # first: in the bpy module, addon_utils is importable only once bpy is

    addon_utils = __import__("addon_utils")

    bpy.ops.extensions.package_install_files(filepath=zip_path, repo=REPO, enable_on_install=True)
    addon_utils.enable(MODULE, default_set=True, persistent=True)
    bpy.ops.wm.save_userpref()
    return MODULE in bpy.context.preferences.addons


if __name__ == "__main__":
    arguments = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    if len(arguments) != 1:
        print("usage: blender --background --python install_persistent.py -- STIM3D_ZIP", file=sys.stderr)
        sys.exit(2)
    enabled = install_persistently(arguments[0])
    print(f"stim3d extension {'enabled and saved in the preferences' if enabled else 'NOT enabled'}")
    sys.exit(0 if enabled else 1)
