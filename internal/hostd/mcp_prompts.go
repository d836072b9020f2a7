package hostd

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/contract"
)

// The MCP server's prompts are the served context's templates, so an MCP
// client that offers prompts (Claude Code lists them as
// /mcp__loadout__<name>) gets the Workspace's templates without any file.
// prompts/get renders through the code /v1/render uses, on the context
// current at the call: a missing variable is an error, never a half-filled
// message. A command's tool steps are not run here: MCP prompts have no way
// to, so the message is its template part and the description says so.

// syncMCPPrompts updates the MCP server's prompts to snap's templates. The
// caller holds s.mu.
func (s *Server) syncMCPPrompts(snap *snapshot) {
	templates := snap.context.Templates()
	defs := make([]string, len(templates))
	for i, t := range templates {
		def, _ := json.Marshal(mcpPrompt(t))
		defs[i] = string(def)
	}
	syncListed(s.mcp.prompts, len(templates), func(i int) (string, string) { return templates[i].Name, defs[i] },
		s.mcp.server.RemovePrompts,
		func(i int) { s.mcp.server.AddPrompt(mcpPrompt(templates[i]), s.mcpGetPrompt(templates[i].Name)) })
}

// mcpPrompt is a template as MCP lists it: every variable is a required
// argument, in the template's order.
func mcpPrompt(t contract.TemplateDoc) *mcp.Prompt {
	p := &mcp.Prompt{Name: t.Name, Description: t.Description}
	for _, v := range t.Variables {
		p.Arguments = append(p.Arguments, &mcp.PromptArgument{Name: v, Required: true})
	}
	return p
}

// mcpGetPrompt renders one template for prompts/get.
func (s *Server) mcpGetPrompt(name string) mcp.PromptHandler {
	return func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		snap := s.current.Load()
		if snap == nil {
			return nil, errors.New("no context loaded yet")
		}
		if err := s.policyRefused(); err != nil {
			return nil, err
		}
		msg, err := snap.context.Render(name, req.Params.Arguments, s.opts.Now())
		if err != nil {
			return nil, err
		}
		out := &mcp.GetPromptResult{Description: strings.TrimSpace("Template " + name + " of the Workspace. " + msg.Note)}
		for _, c := range msg.Content {
			out.Messages = append(out.Messages, &mcp.PromptMessage{Role: mcp.Role(msg.Role), Content: &mcp.TextContent{Text: c.Text}})
		}
		return out, nil
	}
}
