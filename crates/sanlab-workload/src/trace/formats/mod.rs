//! One file per trace format: how its lines (or records) become requests.

pub(super) mod alibaba;
pub(super) mod biosnoop;
pub(super) mod blkparse;
pub(super) mod blktrace_bin;
pub(super) mod fio_iolog;
pub(super) mod msr;
pub(super) mod spc;
pub(super) mod tencent;
