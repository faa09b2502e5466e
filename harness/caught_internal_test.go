package harness

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Catch gives every failure it wants one message, whatever its details,
// so that rapid shrinks to the smallest schedule with a wanted failure;
// other failures keep their names, their numbers masked (a step number or
// a time in a message would otherwise make every shrink step a new
// failure, and stall the shrink).
func TestCatchNormalizesFailures(t *testing.T) {
	norm := wantedMessage([]string{"two leaders", `lost item \d+`})
	for msg, want := range map[string]string{
		"VIOLATION: two leaders":                  caughtPrefix + `two leaders or lost item \d+`,
		"VIOLATION: liveness, two leaders":        caughtPrefix + `two leaders or lost item \d+`,
		"lost item 17 at step 3":                  caughtPrefix + `two leaders or lost item \d+`,
		"lost item 18 at step 40, t=1.5s":         caughtPrefix + `two leaders or lost item \d+`,
		"VIOLATION: liveness":                     "VIOLATION: liveness",
		"my own check failed at step 12, t=3.25s": "my own check failed at step #, t=#.#s",
		"VIOLATION: two leaders are fine":         "VIOLATION: two leaders are fine",
	} {
		require.Equal(t, want, norm(msg), msg)
	}
}
