#!/usr/bin/python3
"""A drag source for the window tests: a small GTK window that drags files.

    drag_source.py X Y FILE...

Opens a 100x100 window titled "scorch-drag-source" at (X, Y) on $DISPLAY. Each drag
that starts in it offers the next FILE (in turn) as text/uri-list, as a file manager
does; dropped on the scorch window, it arrives through winit's XDND support as a dropped
file. The test drives the drag with xdotool (button down in this window, moves, button
up over scorch's). Prints "ready" once the window is mapped.
"""
import sys
from pathlib import Path

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

x, y = int(sys.argv[1]), int(sys.argv[2])
uris = [Path(f).resolve().as_uri() for f in sys.argv[3:]]
turn = [0]

win = Gtk.Window(title="scorch-drag-source")
win.set_default_size(100, 100)
win.move(x, y)
box = Gtk.EventBox()
box.add(Gtk.Label(label="drag me"))
win.add(box)
box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
box.drag_source_add_uri_targets()


def data_get(_widget, _context, data, _info, _time):
    data.set_uris([uris[turn[0] % len(uris)]])


def drag_end(_widget, _context):
    turn[0] += 1


box.connect("drag-data-get", data_get)
box.connect("drag-end", drag_end)
win.connect("destroy", Gtk.main_quit)
win.show_all()


def ready():
    print("ready", flush=True)
    return False


GLib.idle_add(ready)
Gtk.main()
