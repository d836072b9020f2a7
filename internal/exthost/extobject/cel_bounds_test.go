package extobject

import (
	"strings"
	"testing"
)

// The nesting bound names its field when it rejects an Extension object.
func TestValidateObject_NestingBombNamesTheField(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Hooks[0].CEL.Expression = celBomb
	errs := ValidateObject(ext)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.hooks[0].cel.expression") || !strings.Contains(errs[0].Error(), "nests deeper than 32") {
		t.Fatalf("ValidateObject = %v", errs)
	}
}

// celBomb nests CEL far past the 32 levels the compiler accepts.
var celBomb = "size(call.arguments.l" + strings.Repeat(".map(a,[a,a])", 240) + ")>0"

func TestValidateObjectSyntax_ParsesWithoutTypeChecking(t *testing.T) {
	ext := reviewExtension()
	ext.Spec.Hooks[0].CEL.Expression = "workspace.name + 1 > 0"
	if errs := ValidateObjectSyntax(ext); len(errs) != 0 {
		t.Fatalf("syntax check: %v", errs)
	}
	if errs := ValidateObject(ext); len(errs) != 1 || !strings.Contains(errs[0].Error(), "no matching overload") {
		t.Fatalf("full check: %v", errs)
	}
	ext.Spec.Hooks[0].CEL.Expression = celBomb
	if errs := ValidateObjectSyntax(ext); len(errs) != 1 || !strings.Contains(errs[0].Error(), "nests deeper than 32") {
		t.Fatalf("syntax check of the bomb: %v", errs)
	}
}
