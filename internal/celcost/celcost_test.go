package celcost

import "testing"

// TestSizeClass_CoversEverySizeWithinOneAndAHalf: every size falls in a
// class whose upper end is at least the size and less than 1.5× it, and
// classes reach 2 MiB (past hooks' largest input, 1 MiB) within Classes.
func TestSizeClass_CoversEverySizeWithinOneAndAHalf(t *testing.T) {
	for size := uint64(0); size <= 2<<20; size += 1 + size/97 {
		class, upper := SizeClass(size)
		if upper < size || (size >= 4 && float64(upper) >= 1.5*float64(size)) || class >= Classes {
			t.Fatalf("SizeClass(%d) = %d, %d", size, class, upper)
		}
		if c2, _ := SizeClass(upper); c2 != class {
			t.Fatalf("upper end %d of size %d's class %d is in class %d", upper, size, class, c2)
		}
	}
}
