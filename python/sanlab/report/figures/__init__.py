"""The report's figures: one function per figure, each returning a titled, captioned plotly figure
(`common.Figure`), or None when the run has nothing to show for it. Every function takes the
engine's document (with each variant's time series); a variant keeps its colour in every figure.
One file per section of the page; `common`, `grid` (small multiples of time lines), `heatmaps`
and `marks` (fault and event marks) are what they draw with.
"""

from sanlab.report.figures.common import (
    MAX_LINES,
    MAX_NAMED_VARIANTS,
    PALETTE,
    SAME_IOPS_TOLERANCE,
    Figure,
    doc_groups,
    in_group_order,
    log_ticks,
    packed,
    series_frame,
    variant_colors,
)  # fmt: skip
from sanlab.report.figures.cores import core_util_figure
from sanlab.report.figures.grid import FAULT_MARK_PX
from sanlab.report.figures.health import degraded_share_figure
from sanlab.report.figures.hosts import host_flow_control_figure, injector_figure
from sanlab.report.figures.latency import latency_cdf_figure
from sanlab.report.figures.marks import FAULT_MARKS_TEXT
from sanlab.report.figures.overview import overview_figure, winners
from sanlab.report.figures.paths import path_timeline_figure, paths_figure
from sanlab.report.figures.replicas import replica_ranges, replicated
from sanlab.report.figures.timelines import device_queue_figure, vm_iops_figure, vm_latency_figure

__all__ = [
    "FAULT_MARKS_TEXT", "FAULT_MARK_PX", "MAX_LINES", "MAX_NAMED_VARIANTS", "PALETTE", "SAME_IOPS_TOLERANCE",
    "Figure", "core_util_figure", "degraded_share_figure", "device_queue_figure", "doc_groups",
    "host_flow_control_figure", "in_group_order", "injector_figure", "latency_cdf_figure", "log_ticks",
    "overview_figure", "packed", "path_timeline_figure", "paths_figure", "replica_ranges", "replicated",
    "series_frame", "variant_colors",
    "vm_iops_figure", "vm_latency_figure", "winners",
]  # fmt: skip
