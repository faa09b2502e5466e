package zkwire

import (
	"testing"
	"time"
)

// TestLatencyAsServerPrintsIt: srvr's latencies are whole milliseconds per
// request (a sub-millisecond request counts 0), the average rounded half up
// to 4 decimals and printed as Java prints a double.
func TestLatencyAsServerPrintsIt(t *testing.T) {
	var l latency
	if min, avg, max := l.get(); min != 0 || avg != "0.0" || max != 0 {
		t.Errorf("no requests: %d/%s/%d, want 0/0.0/0", min, avg, max)
	}
	for _, d := range []time.Duration{700 * time.Microsecond, 2 * time.Millisecond, 2*time.Millisecond + 900*time.Microsecond} {
		l.add(d)
	}
	if min, avg, max := l.get(); min != 0 || avg != "1.3333" || max != 2 {
		t.Errorf("0, 2 and 2 ms: %d/%s/%d, want 0/1.3333/2", min, avg, max)
	}
	for v, want := range map[float64]string{
		0: "0.0", 3: "3.0", 2.5: "2.5", 4.1579: "4.1579", 0.001: "0.001", 0.0001: "1.0E-4",
		0.0009: "9.0E-4", 1234567: "1234567.0", 1.5e7: "1.5E7", 12345678: "1.2345678E7",
	} {
		if got := javaDouble(v); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestLastOpNames: cons names the last op as FinalRequestProcessor does; a
// write that failed before it was applied is "NA", a failed read keeps its
// name.
func TestLastOpNames(t *testing.T) {
	for _, tc := range []struct {
		op     int32
		failed bool
		want   string
	}{
		{4, false, "GETD"}, {4, true, "GETD"}, {1, false, "CREA"}, {15, true, "NA"}, {14, true, "MULT"},
		{11, false, "PING"}, {-10, false, "SESS"}, {16, true, "NA"}, {22, false, "MLTR"}, {42, false, "NA"},
	} {
		if got := lastOpName(tc.op, tc.failed); got != tc.want {
			t.Errorf("lastOpName(%d, %t) = %q, want %q", tc.op, tc.failed, got, tc.want)
		}
	}
}
