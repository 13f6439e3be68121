package cachepoint

import (
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// point is a cache point of a request, the caller's or one to place.
type point struct {
	field int // Tools, System or Messages
	msg   int // the message, for FieldMessages
	index int // the caller's point: its block; ours go at the end of the list
	rank  int // Rank of its TTL
	ours  bool
}

// Place adds cachePoint blocks to in for model m, with TTL ttl
// ("" for Bedrock's default), by the rules of the prompt caching table (see
// models.Cache). Points go after the tool definitions, after the system
// prompt and at the end of the newest user messages. For a model that
// takes no point after a tool result, they go at the end of the newest
// messages of either role. So each turn reads the prefix the turn before
// wrote. Only the fields the model takes get points. A point goes only
// where the prefix has the model's minimum of tokens, estimated at a token
// per four bytes of its JSON. It never goes right after a document or
// video block. With the caller's own points, a request holds at most
// models.MaxCachePoints: the oldest message points, the caller's included,
// are dropped first. A placed point's TTL is lowered to keep TTLs from
// increasing from tools to system to messages. The point is left out if
// even that cannot. in's slices are replaced, never written: the history
// and Options keep no cache point of ours.
func Place(m models.Model, ttl types.CacheTTL, in *bedrockruntime.ConverseInput) {
	rules, ok := m.Cache()
	if !ok {
		return
	}
	if ttl == types.CacheTTLOneHour && !rules.LongTTL {
		ttl = ""
	}
	points := callerPoints(in)
	est := newPrefixTokens(in)
	var tools []types.Tool
	if in.ToolConfig != nil {
		tools = in.ToolConfig.Tools
	}
	if rules.Tools && len(tools) > 0 && !isToolPoint(tools[len(tools)-1]) && est.toolsReach(rules.MinTokens) {
		points = append(points, point{field: Tools, rank: Rank(ttl), ours: true})
	}
	if rules.System && len(in.System) > 0 && !isSystemPoint(in.System[len(in.System)-1]) && est.systemReach(rules.MinTokens) {
		points = append(points, point{field: System, rank: Rank(ttl), ours: true})
	}
	if rules.Messages {
		// Points on the newest user messages, where the turn before put its
		// own, up to as many as a request takes; fitPoints drops the oldest
		// that do not fit. A model that takes no point after a tool result
		// gets them on the newest messages of either role that take one:
		// in a tool loop, the assistant's calls.
		for n, placed := len(in.Messages)-1, 0; n >= 0 && placed < models.MaxCachePoints; n-- {
			msg := in.Messages[n]
			if (msg.Role == types.ConversationRoleUser || !rules.AfterToolResult) && takesPoint(msg, rules) && est.reaches(n, rules.MinTokens) {
				points = append(points, point{field: Messages, msg: n, rank: Rank(ttl), ours: true})
				placed++
			}
		}
	}
	slices.SortStableFunc(points, comparePoints)
	points = fitPoints(points)
	write(in, points, ttl)
}

// callerPoints lists the cache points in already.
func callerPoints(in *bedrockruntime.ConverseInput) []point {
	var points []point
	for _, cp := range List(in) {
		points = append(points, point{field: cp.Field, msg: cp.Msg, index: cp.Index, rank: Rank(cp.TTL)})
	}
	return points
}

func isToolPoint(t types.Tool) bool {
	_, ok := t.(*types.ToolMemberCachePoint)
	return ok
}

func isSystemPoint(b types.SystemContentBlock) bool {
	_, ok := b.(*types.SystemContentBlockMemberCachePoint)
	return ok
}

// takesPoint reports whether a cache point may go at the end of msg: it has
// content and a point may follow its last block (Follows).
func takesPoint(msg types.Message, rules models.Cache) bool {
	return len(msg.Content) > 0 && Follows(rules, msg.Content[len(msg.Content)-1]) == Allowed
}

// comparePoints orders points as they come in a request; one of ours comes
// after the blocks of its list.
func comparePoints(a, b point) int {
	key := func(p point) [3]int {
		i := p.index
		if p.ours {
			i = int(^uint(0) >> 1)
		}
		return [3]int{p.field, p.msg, i}
	}
	ka, kb := key(a), key(b)
	return slices.Compare(ka[:], kb[:])
}

// fitPoints keeps at most models.MaxCachePoints of points, in request
// order. It drops message points oldest first, then ours in order. The
// tools' point goes first, as the system prompt's covers the tools too. It
// lowers the TTL of ours where a point before has a shorter one. It drops
// ours where a caller's point after has a longer one.
func fitPoints(points []point) []point {
	for len(points) > models.MaxCachePoints {
		drop := slices.IndexFunc(points, func(p point) bool { return p.field == Messages })
		if drop < 0 {
			drop = slices.IndexFunc(points, func(p point) bool { return p.ours })
		}
		if drop < 0 {
			break // the caller's own are too many; Bedrock will say so
		}
		points = slices.Delete(points, drop, drop+1)
	}
	var kept []point
	for i, p := range points {
		if p.ours {
			for _, q := range kept {
				p.rank = min(p.rank, q.rank)
			}
			if slices.ContainsFunc(points[i+1:], func(q point) bool { return !q.ours && q.rank > p.rank }) {
				continue
			}
		}
		kept = append(kept, p)
	}
	return kept
}

// write makes points the cache points of in: ours added, the caller's
// dropped ones removed, in new slices.
func write(in *bedrockruntime.ConverseInput, points []point, ttl types.CacheTTL) {
	keep := map[[3]int]bool{}
	var ours [Messages + 1]map[int]types.CachePointBlock
	for i := range ours {
		ours[i] = map[int]types.CachePointBlock{}
	}
	for _, p := range points {
		if !p.ours {
			keep[[3]int{p.field, p.msg, p.index}] = true
			continue
		}
		cp := types.CachePointBlock{Type: types.CachePointTypeDefault}
		if p.rank == 1 {
			cp.Ttl = types.CacheTTLOneHour
		} else if ttl == types.CacheTTLFiveMinutes {
			cp.Ttl = ttl
		}
		ours[p.field][p.msg] = cp
	}
	if cp, ok := ours[Tools][0]; ok {
		cfg := *in.ToolConfig
		cfg.Tools = append(slices.Clip(cfg.Tools), &types.ToolMemberCachePoint{Value: cp})
		in.ToolConfig = &cfg
	}
	if cp, ok := ours[System][0]; ok {
		in.System = append(slices.Clip(in.System), &types.SystemContentBlockMemberCachePoint{Value: cp})
	}
	msgs := slices.Clone(in.Messages)
	for n, msg := range msgs {
		var content []types.ContentBlock
		changed := false
		for i, b := range msg.Content {
			if _, ok := b.(*types.ContentBlockMemberCachePoint); ok && !keep[[3]int{Messages, n, i}] {
				changed = true
				continue
			}
			content = append(content, b)
		}
		if cp, ok := ours[Messages][n]; ok {
			content, changed = append(content, &types.ContentBlockMemberCachePoint{Value: cp}), true
		}
		if changed {
			msgs[n].Content = content
		}
	}
	in.Messages = msgs
}

// prefixTokens tells whether a request's prefixes have a model's minimum
// of tokens, as bedrocktest counts them: the bytes of their JSON over
// wire.BytesPerToken. The text they hold gives a lower bound for free. So
// a long system prompt or tool set is encoded only when that bound falls
// short. Messages are counted from the oldest, and only until the prefix
// has the minimum, as the prefixes after it are longer.
type prefixTokens struct {
	in                *bedrockruntime.ConverseInput
	toolsText, system int // the tools' text over BytesPerToken; the system prefix, -1 until counted
	counted           int // the messages counted so far
	sum               int // the tokens of the prefix through them
}

func newPrefixTokens(in *bedrockruntime.ConverseInput) *prefixTokens {
	text := 0
	if in.ToolConfig != nil {
		for _, t := range in.ToolConfig.Tools {
			if spec, ok := t.(*types.ToolMemberToolSpec); ok {
				text += len(aws.ToString(spec.Value.Name)) + len(aws.ToString(spec.Value.Description))
			}
		}
	}
	return &prefixTokens{in: in, toolsText: text / wire.BytesPerToken, system: -1}
}

// toolsReach reports whether the tool definitions have min tokens.
func (p *prefixTokens) toolsReach(min int) bool {
	return p.toolsText >= min || wire.EstimateTokens(&bedrockruntime.ConverseInput{ToolConfig: p.in.ToolConfig}) >= min
}

// systemReach reports whether the prefix through the system prompt has min
// tokens.
func (p *prefixTokens) systemReach(min int) bool {
	if p.system < 0 {
		text := 0
		for _, b := range p.in.System {
			if t, ok := b.(*types.SystemContentBlockMemberText); ok {
				text += len(t.Value)
			}
		}
		if p.toolsText+text/wire.BytesPerToken >= min {
			return true
		}
		p.system = wire.EstimateTokens(&bedrockruntime.ConverseInput{ToolConfig: p.in.ToolConfig, System: p.in.System})
	}
	return p.system >= min
}

// reaches reports whether the prefix through message n has min tokens.
func (p *prefixTokens) reaches(n, min int) bool {
	if p.systemReach(min) {
		return true
	}
	if p.counted == 0 {
		p.sum = p.system
	}
	for p.sum < min && p.counted <= n {
		p.sum += wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: p.in.Messages[p.counted : p.counted+1]})
		p.counted++
	}
	// counted stops at the first message whose prefix has min tokens.
	return p.sum >= min && n >= p.counted-1
}
