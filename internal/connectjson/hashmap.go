package connectjson

// HashMapOrder returns the iteration order of a Java new HashMap<>() after
// putting keys in the given order. A repeated key keeps its first position,
// as put does for an existing key, and is returned once.
//
// The model: hash = h ^ (h >>> 16) with h = String.hashCode; the table starts
// with 16 buckets and doubles when the size exceeds 0.75 of it, and also when
// a bucket reaches 9 keys while the table has fewer than 64 buckets; bucket =
// hash & (buckets-1); buckets are visited in ascending order, and keys within
// a bucket in insertion order (a resize keeps that order). A bucket of 9 or
// more keys in a table of 64 or more is turned into a tree by Java; that
// order is not modelled.
func HashMapOrder(keys []string) []string {
	order, _ := hashMapOrder(keys)
	return order
}

// hashMapOrder is HashMapOrder; treeified reports that Java turned a bucket
// into a tree, so that the order returned may be wrong.
func hashMapOrder(keys []string) (order []string, treeified bool) {
	type node struct {
		key  string
		hash uint32
	}
	const treeifyThreshold, minTreeifyCapacity = 8, 64
	buckets := make([][]node, 16)
	threshold, size := 12, 0
	resize := func() {
		old := buckets
		buckets = make([][]node, 2*len(old))
		threshold *= 2
		for _, bucket := range old {
			for _, n := range bucket {
				i := n.hash & uint32(len(buckets)-1)
				buckets[i] = append(buckets[i], n)
			}
		}
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		h := uint32(javaStringHash(k))
		h ^= h >> 16
		i := h & uint32(len(buckets)-1)
		buckets[i] = append(buckets[i], node{k, h})
		if len(buckets[i]) > treeifyThreshold {
			if len(buckets) < minTreeifyCapacity {
				resize() // HashMap.treeifyBin resizes small tables instead
			} else {
				treeified = true
			}
		}
		if size++; size > threshold {
			resize()
		}
	}
	order = make([]string, 0, size)
	for _, bucket := range buckets {
		for _, n := range bucket {
			order = append(order, n.key)
		}
	}
	return order, treeified
}
