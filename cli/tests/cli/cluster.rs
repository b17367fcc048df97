//! A sharded filter over a 3-master cluster (one replica each).
