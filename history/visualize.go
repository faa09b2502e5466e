package history

import (
	"io"

	"github.com/anishathalye/porcupine"
)

// VisualizeWrites writes to w an HTML page that shows the writes of ops
// on a timeline, one lane per path, with the longest linearization
// porcupine found for each path and the state of the node after each
// write (see porcupine.Visualize). Open it in a browser to see why Check
// found a path's writes not linearizable. It returns an error when the
// history cannot be judged, as Check does.
func VisualizeWrites(ops []Op, w io.Writer) error {
	c, err := newChecker(ops)
	if err != nil {
		return err
	}
	c.learn()
	c.effectTimes()
	model := newModel(ops)
	m := model.ToModel()
	_, info := porcupine.CheckOperationsVerbose(m, c.porcupineHistory(), 0)
	return porcupine.Visualize(m, info, w)
}
