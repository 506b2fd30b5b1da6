package policy

import (
	"errors"
	"fmt"

	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// Schema is the Cedar schema of the entities a policy sees (package documentation,
// "Entities"). The arguments record is declared empty, since each tool has its own: the
// validator then accepts an argument read only behind `has` (context.arguments has left &&
// context.arguments.left < 1000), which is how a policy must read one (a forbid that reads a
// missing argument fails closed).
const Schema = `namespace Toolgate {
  entity Group;
  entity User in [Group] {
    issuer: String, subject: String, tenant: String, name: String,
    authenticatedBy: String, authenticated: Bool, anonymous: Bool,
    actor?: { issuer: String, subject: String, name: String },
  };
  type Annotations = { readOnlyHint: Bool, destructiveHint: Bool, idempotentHint: Bool };
  entity Tool { sideEffect: String, requireApproval: Bool, sideEffectAssumed: Bool, annotations: Annotations };
  action call appliesTo {
    principal: User,
    resource: Tool,
    context: { arguments: {}, calls?: { total: Long, tool: Long } },
  };
}
`

// Validate checks every policy of s against Schema with Cedar's validator (strict mode): an
// unknown entity type or attribute, a type error, a scope no request can match. The error names
// each failing policy by ID and line.
func (s *Set) Validate() error {
	var sch schema.Schema
	if err := sch.UnmarshalCedar([]byte(Schema)); err != nil {
		return fmt.Errorf("policy: the schema does not parse: %w", err)
	}
	resolved, err := sch.Resolve()
	if err != nil {
		return fmt.Errorf("policy: the schema does not resolve: %w", err)
	}
	v := validate.New(resolved, validate.WithStrict())
	var errs []error
	for _, e := range s.policies {
		if err := v.Policy(e.id, (*xast.Policy)(e.p.AST())); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: policy %q: %w", s.name, e.line, e.id, err))
		}
	}
	return errors.Join(errs...)
}
