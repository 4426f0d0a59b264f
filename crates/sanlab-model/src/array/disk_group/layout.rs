//! RAID layout: which disk and offset hold each byte of the group, and a host request cut at
//! element boundaries (left-symmetric RAID-5, or RAID-0).

/// Where RAID puts the bytes of the group.
#[derive(Clone, Copy)]
pub(super) struct Layout {
    pub(super) disks: u32,
    pub(super) parity: bool,
    pub(super) element_bytes: u64,
    pub(super) stripes: u64,
}

/// The part of a host request that falls in one data element.
#[derive(Clone, Copy)]
pub(super) struct Piece {
    pub(super) stripe: u64,
    pub(super) element: u32,
    pub(super) within_bytes: u64,
    pub(super) size_bytes: u64,
}

impl Layout {
    pub(super) fn data_disks(&self) -> u32 {
        self.disks - u32::from(self.parity)
    }

    pub(super) fn data_bytes(&self) -> u64 {
        self.stripes * u64::from(self.data_disks()) * self.element_bytes
    }

    /// Left-symmetric: parity starts on the last disk and moves one disk left per stripe.
    pub(super) fn parity_disk(&self, stripe: u64) -> u32 {
        self.disks - 1 - (stripe % u64::from(self.disks)) as u32
    }

    pub(super) fn data_disk(&self, stripe: u64, element: u32) -> u32 {
        if self.parity {
            (self.parity_disk(stripe) + 1 + element) % self.disks
        } else {
            element
        }
    }

    pub(super) fn disk_offset(&self, stripe: u64, within_bytes: u64) -> u64 {
        stripe * self.element_bytes + within_bytes
    }

    pub(super) fn pieces(&self, offset_bytes: u64, size_bytes: u64) -> Pieces {
        Pieces { layout: *self, next_bytes: offset_bytes % self.data_bytes(), left_bytes: size_bytes }
    }
}

pub(super) struct Pieces {
    pub(super) layout: Layout,
    pub(super) next_bytes: u64,
    pub(super) left_bytes: u64,
}

impl Iterator for Pieces {
    type Item = Piece;

    fn next(&mut self) -> Option<Piece> {
        if self.left_bytes == 0 {
            return None;
        }
        let l = &self.layout;
        let element_index = self.next_bytes / l.element_bytes;
        let within_bytes = self.next_bytes % l.element_bytes;
        let size_bytes = (l.element_bytes - within_bytes).min(self.left_bytes);
        let data_disks = u64::from(l.data_disks());
        self.left_bytes -= size_bytes;
        self.next_bytes = (self.next_bytes + size_bytes) % l.data_bytes();
        Some(Piece { stripe: element_index / data_disks, element: (element_index % data_disks) as u32, within_bytes, size_bytes })
    }
}
