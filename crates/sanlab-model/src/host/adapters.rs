//! Queue-depth defaults and limits of adapters, from VMware KB 2053145 and the driver sources
//! listed in docs/models/host.md.

/// A VM's virtual SCSI adapter: (default disk queue, max disk queue, default adapter queue, max adapter queue).
pub struct VirtualAdapter {
    pub kind: &'static str,
    pub disk_queue: (u32, u32),
    pub adapter_queue: (u32, u32),
}

pub const VIRTUAL_ADAPTERS: [VirtualAdapter; 3] = [
    VirtualAdapter { kind: "pvscsi", disk_queue: (64, 254), adapter_queue: (254, 1024) },
    VirtualAdapter { kind: "lsilogic", disk_queue: (32, 32), adapter_queue: (128, 128) },
    // No guest limits: for analytic checks where only the array should queue.
    VirtualAdapter { kind: "ideal", disk_queue: (1 << 20, 1 << 20), adapter_queue: (1 << 20, 1 << 20) },
];

/// A host's storage adapter: LUN and adapter queue depths (default, max), and the size at which
/// the adapter itself cuts requests (below the device queue), if it does.
pub struct HostAdapter {
    pub kind: &'static str,
    pub lun_queue_depth: (u32, u32),
    pub queue_depth: (u32, u32),
    pub max_io_size_bytes: Option<u64>,
    pub max_io_size_limit_bytes: u64,
}

pub const HOST_ADAPTERS: [HostAdapter; 3] = [
    // qlnativefc LUN queue depth 64. Maximums and the adapter-wide depth are our choice.
    HostAdapter { kind: "fc", lun_queue_depth: (64, 4096), queue_depth: (4096, 65536), max_io_size_bytes: None, max_io_size_limit_bytes: 32767 * 1024 },
    // iscsivmk_LunQDepth 128; ISCSI.MaxIoSizeKB 128 (128-512). Adapter-wide depth is our choice.
    HostAdapter { kind: "sw_iscsi", lun_queue_depth: (128, 4096), queue_depth: (1024, 65536), max_io_size_bytes: Some(128 * 1024), max_io_size_limit_bytes: 512 * 1024 },
    HostAdapter { kind: "ideal", lun_queue_depth: (1 << 20, 1 << 20), queue_depth: (1 << 20, 1 << 20), max_io_size_bytes: None, max_io_size_limit_bytes: 1 << 31 },
];

/// Disk.DiskMaxIOSize: default and maximum 32767 KB, minimum 32 KB.
pub const DISK_MAX_IO_SIZE_BYTES: (u64, u64, u64) = (32 * 1024, 32767 * 1024, 32767 * 1024);
