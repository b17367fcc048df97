//! Reading the fixed-width little-endian fields of the dump headers (RedisBloom's Bloom
//! header and redbloom's counting and sliding-window headers share the layout style).

/// Little-endian field reader over a slice whose length was checked beforehand.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl Reader<'_> {
    pub(crate) fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        head.try_into().expect("length checked")
    }
    pub(crate) fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub(crate) fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub(crate) fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
    pub(crate) fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
}
