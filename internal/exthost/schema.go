package exthost

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaLocation names a tool's input schema inside its compiler. Relative
// $refs ("#/$defs/x") resolve against it; nothing else is ever loaded.
const schemaLocation = "loadout:///inputSchema.json"

// InputSchema is a tool's compiled input schema (JSON Schema draft 2020-12
// unless the document's $schema names another draft).
type InputSchema struct {
	schema *jsonschema.Schema
}

// CompileInputSchema compiles a tool's inputSchema. It must be a JSON object
// whose "type" is "object" (the shape tool-calling models expect) and a valid
// schema; references outside the document are refused, so compiling never
// reads a file or the network. The controller (Extension validation) and
// hostd (each reload) compile with this one function.
func CompileInputSchema(raw []byte) (*InputSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errors.New("must be a JSON object")
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON object")
	}
	if t, _ := obj["type"].(string); t != "object" {
		return nil, errors.New(`must have "type": "object"`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	if err := c.AddResource(schemaLocation, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(schemaLocation)
	if err != nil {
		return nil, fmt.Errorf("does not compile as a JSON Schema: %s", schemaErrorText(err))
	}
	return &InputSchema{schema: s}, nil
}

// Validate checks a call's arguments. Absent arguments are the empty object,
// as agents and MCP send them. The error lists every violation with its
// location in the arguments.
func (s *InputSchema) Validate(arguments map[string]any) error {
	var v any = arguments
	if arguments == nil {
		v = map[string]any{}
	}
	if err := s.schema.Validate(v); err != nil {
		return errors.New(schemaErrorText(err))
	}
	return nil
}

// refusingLoader fails every load: a tool's schema is one self-contained
// document. (The library's default loader reads file:// URLs, which would let
// an Extension make the manager read its files.)
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside the schema: only references within the inputSchema document are allowed", url)
}

// schemaErrorText turns the library's nested error tree into one line: each
// leaf violation with its location ("at '/text': got number, want string"),
// in the library's order. Condition messages and tool results are read as
// one line, and users know the schema as the tool's inputSchema.
func schemaErrorText(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		err = sve.Err
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return strings.ReplaceAll(err.Error(), schemaLocation, "inputSchema")
	}
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, fmt.Sprintf("at '/%s': %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(schemaPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(leaves, "; ")
}

var schemaPrinter = message.NewPrinter(language.English)
