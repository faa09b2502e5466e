package zkmem

import (
	"fmt"
	"math"
	"testing"
)

func TestSequentialNameMatchesJavaFormat(t *testing.T) {
	for _, v := range []int32{0, 1, 9, 10, 123456789, 999999999, 1000000000, math.MaxInt32, math.MinInt32, -1, -5, -123456789, -999999999, -1000000000} {
		// Java's String.format("%010d", v) and Go's fmt agree: zero padding
		// to width 10, the sign inside the width.
		want := fmt.Sprintf("/p-%010d", v)
		if got := sequentialName("/p-", v); got != want {
			t.Errorf("sequentialName(%d) = %q, want %q", v, got, want)
		}
	}
}
