package snapshot

// PartitionFor is the partition a Java producer (and franz-go's default
// partitioner) chooses for key among n: murmur2(key) & 0x7fffffff % n.
func PartitionFor(key []byte, n int32) int32 {
	if n <= 0 {
		return 0
	}
	return int32(murmur2(key)&0x7fffffff) % n
}

// murmur2 is Kafka's Utils.murmur2 (seed 0x9747b28c), as Java producers and
// franz-go's default partitioner use it.
func murmur2(b []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	h := uint32(seed) ^ uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
