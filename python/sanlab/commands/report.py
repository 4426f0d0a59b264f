"""`sanlab report RUN_DIR`: writes a run folder's report.html again (with the section a
`compare --esxtop` left there)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sanlab.export.files import refuse_links, replace_text
from sanlab.export.runfolder import read_run_folder, render_folders
from sanlab.formatting import shown_name
from sanlab.hostimport.compare import measured_sections
from sanlab.report import REPORT_FILE, ReportRun


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", type=Path, help="run folder written by `sanlab run`")


def main(args: argparse.Namespace) -> int:
    path = args.run_dir / REPORT_FILE
    refuse_links([path])  # before reading: a folder that would be refused costs nothing
    doc, manifest = read_run_folder(args.run_dir)
    extra = measured_sections(args.run_dir, doc)
    replace_text(path, render_folders([ReportRun(args.run_dir.name, doc, manifest)], extra))
    print(f"report: {shown_name(str(path))}")
    return 0
