package sim

import "fmt"

// ChoiceKind says what an enabled event of a step does (see Choice).
type ChoiceKind uint8

const (
	// ChoiceAdmit: the session's head request reaches the server.
	ChoiceAdmit ChoiceKind = iota
	// ChoiceDeliver: the head of the session's FIFO (a reply, a watch
	// event or a state change) reaches its client.
	ChoiceDeliver
	// ChoiceMemberApply: a lagging member of an ensemble applies its next
	// commit.
	ChoiceMemberApply
	// ChoiceLetTimePass: only lagging members' applies are enabled, and
	// the step lets time pass with them behind.
	ChoiceLetTimePass
)

func (k ChoiceKind) String() string {
	switch k {
	case ChoiceAdmit:
		return "admit"
	case ChoiceDeliver:
		return "deliver"
	case ChoiceMemberApply:
		return "member apply"
	case ChoiceLetTimePass:
		return "let time pass"
	}
	return fmt.Sprintf("ChoiceKind(%d)", uint8(k))
}

// Choice is one of the events a step may take, as Config.Choose sees it.
// Its identity outlives the step: the same session's admit is the same
// Choice whichever other events are enabled beside it, so a generator
// that picks by identity rather than by position keeps its picks when a
// shrink drops an unrelated event.
type Choice struct {
	Kind ChoiceKind
	// Index is the session's index (c3's is 3) for an admit or a delivery,
	// the member's for a member's apply, 0 for letting time pass.
	Index int
}

func (c Choice) String() string {
	switch c.Kind {
	case ChoiceAdmit, ChoiceDeliver:
		return fmt.Sprintf("%v c%d", c.Kind, c.Index)
	case ChoiceMemberApply:
		return fmt.Sprintf("%v m%d", c.Kind, c.Index)
	}
	return c.Kind.String()
}

// clientChoices lists, in the canonical order, the clients' enabled events:
// the first applies admits, then the deliveries, in the World's buffer.
func (w *World) clientChoices(applies int) []Choice {
	cs := w.choiceBuf[:0]
	for k := range applies {
		cs = append(cs, Choice{Kind: ChoiceAdmit, Index: w.applyOK.nth(k)})
	}
	for k := range w.deliver.len() {
		cs = append(cs, Choice{Kind: ChoiceDeliver, Index: w.deliver.nth(k)})
	}
	return cs
}

// memberChoices appends the first members of the lagging members' applies
// (memberEvents) to cs.
func (w *World) memberChoices(cs []Choice, members int) []Choice {
	for _, m := range w.ens.events[:members] {
		cs = append(cs, Choice{Kind: ChoiceMemberApply, Index: m})
	}
	return cs
}

// ask hands the choice among cs to Config.Choose and checks its answer: an
// index into cs, or -1 to leave the choice to the seed. It keeps cs's
// array as the World's buffer for the next offer.
func (w *World) ask(cs []Choice) int {
	w.choiceBuf = cs[:0]
	k := w.cfg.Choose(cs)
	if k >= len(cs) {
		panic(fmt.Sprintf("sim: Config.Choose returned %d for %d enabled events", k, len(cs)))
	}
	if k < 0 {
		return -1
	}
	return k
}
