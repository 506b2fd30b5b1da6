package policy

import (
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/eval"

	"github.com/toolgate/toolgate/toolcore"
)

// Visible reports whether a tool list shown to principal p (nil: anonymous) should include t.
// It is false only when the set denies every call of t by p whatever the context: a forbid
// (not an @effect("approve") one) matches with no condition left that reads the context, or no
// permit could match. Cedar's partial evaluation decides, with the context unknown; anything
// it cannot settle (a condition on the arguments, an error) keeps the tool listed, so a
// listed tool may still be denied for some arguments, and a hidden one is denied for all.
func (s *Set) Visible(p *toolcore.Principal, t Tool) bool {
	ents := newEntities(p, t)
	env := eval.Env{
		Entities:  ents,
		Principal: ents.user.UID,
		Action:    actionCall,
		Resource:  ents.tool.UID,
		Context:   eval.Variable("context"),
	}
	permitPossible := false
	for _, l := range s.authz {
		partial, keep := eval.PartialPolicy(env, (*xast.Policy)(l.p.AST()))
		if !keep {
			continue
		}
		if types.Effect(partial.Effect) == types.Forbid {
			if len(partial.Conditions) == 0 {
				return false
			}
			continue
		}
		permitPossible = true
	}
	return permitPossible
}
