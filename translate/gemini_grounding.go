package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// Gemini reports the searches and fetches it ran on the candidate, after
// the text they informed, not as parts (server_tool_results.go):
//
//	"groundingMetadata":{"webSearchQueries":["…"],
//	  "groundingChunks":[{"web":{"uri":"…","title":"…"}}], "groundingSupports":[…]}
//	"urlContextMetadata":{"urlMetadata":[{"retrievedUrl":"…",
//	  "urlRetrievalStatus":"URL_RETRIEVAL_STATUS_SUCCESS"}]}
//
// It differs from the IR in three ways, bridged so:
//
//   - There are no calls, only queries: each query becomes a call with a
//     made-up id (gs_…, which no other backend takes for its own), and
//     the sources, which Gemini does not tie to a query, are the result of
//     the first. A fetched URL is a call and its result.
//   - It comes at the end of the answer, on the last chunks of a stream:
//     the decoder emits the blocks when it arrives, after the text, and
//     never holds the text back to put them first as Anthropic does. A
//     chunk repeating what an earlier one reported adds nothing.
//   - A Gemini client gets the calls and results of another backend back
//     as groundingMetadata: the queries and sources of each result on a
//     chunk of its own as it arrives (in a whole response, on the
//     candidate), the queries no result followed on the last chunk.
//     Citations become groundingSupports, the pages they cite repeated in
//     the groundingChunks of the chunk that carries them, since a
//     support's indices point into its own metadata.

// geminiServerToolIDPrefix starts the ids louter makes for Gemini's
// queries.
const geminiServerToolIDPrefix = "gs_"

// geminiGrounding is what a Gemini answer reported so far of its searches
// and fetches, so that a chunk repeating it adds nothing.
type geminiGrounding struct {
	seen     map[string]bool // queries, source URIs and fetched URLs reported
	searchID string          // the id of the first query, which the sources answer
}

// decode emits the server tool blocks of a candidate's grounding and URL
// context metadata that were not reported before.
func (g *geminiGrounding) decode(dst []Event, em *Emitter, cand gjson.Result) []Event {
	gm := geminiGet(cand, "groundingMetadata", "grounding_metadata")
	uc := geminiGet(cand, "urlContextMetadata", "url_context_metadata")
	if !gm.IsObject() && !uc.IsObject() {
		return dst
	}
	if g.seen == nil {
		g.seen = map[string]bool{}
	}
	dst = g.citations(dst, em, gm)
	geminiGet(gm, "webSearchQueries", "web_search_queries").ForEach(func(_, q gjson.Result) bool {
		if q.Str == "" || g.seen["q:"+q.Str] {
			return true
		}
		g.seen["q:"+q.Str] = true
		u := &ServerToolUse{ID: newID(geminiServerToolIDPrefix), Kind: ServerWebSearch, Query: q.Str}
		if g.searchID == "" {
			g.searchID = u.ID
		}
		dst = em.ServerTool(dst, BlockServerToolCall, u)
		return true
	})
	var found []WebResult
	geminiGet(gm, "groundingChunks", "grounding_chunks").ForEach(func(_, c gjson.Result) bool {
		web := c.Get("web")
		uri := web.Get("uri").Str
		if uri == "" || g.seen["s:"+uri] {
			return true
		}
		g.seen["s:"+uri] = true
		found = append(found, WebResult{URL: uri, Title: web.Get("title").Str})
		return true
	})
	if len(found) > 0 {
		if g.searchID == "" {
			// Sources without a query: a call to answer.
			g.searchID = newID(geminiServerToolIDPrefix)
			dst = em.ServerTool(dst, BlockServerToolCall, &ServerToolUse{ID: g.searchID, Kind: ServerWebSearch})
		}
		dst = em.ServerTool(dst, BlockServerToolResult, &ServerToolUse{ID: g.searchID, Kind: ServerWebSearch, Results: found})
	}
	geminiGet(uc, "urlMetadata", "url_metadata").ForEach(func(_, m gjson.Result) bool {
		url := geminiGet(m, "retrievedUrl", "retrieved_url").Str
		if url == "" || g.seen["u:"+url] {
			return true
		}
		g.seen["u:"+url] = true
		call := &ServerToolUse{ID: newID(geminiServerToolIDPrefix), Kind: ServerWebFetch, URL: url}
		res := &ServerToolUse{ID: call.ID, Kind: ServerWebFetch}
		switch st := geminiGet(m, "urlRetrievalStatus", "url_retrieval_status").Str; st {
		case "URL_RETRIEVAL_STATUS_SUCCESS", "":
			res.Results = []WebResult{{URL: url}}
		case "URL_RETRIEVAL_STATUS_UNSAFE":
			res.ErrorCode = "url_not_allowed"
		default:
			res.ErrorCode = "url_not_accessible"
		}
		dst = em.ServerTool(dst, BlockServerToolCall, call)
		dst = em.ServerTool(dst, BlockServerToolResult, res)
		return true
	})
	return dst
}

// citations emits the groundingSupports not reported before as citations
// of the open text block, before the searches close it: each support
// cites its segment of the answer from each chunk it names.
func (g *geminiGrounding) citations(dst []Event, em *Emitter, gm gjson.Result) []Event {
	chunks := geminiGet(gm, "groundingChunks", "grounding_chunks").Array()
	geminiGet(gm, "groundingSupports", "grounding_supports").ForEach(func(_, s gjson.Result) bool {
		seg := s.Get("segment")
		start := int(geminiGet(seg, "startIndex", "start_index").Int())
		end := int(geminiGet(seg, "endIndex", "end_index").Int())
		geminiGet(s, "groundingChunkIndices", "grounding_chunk_indices").ForEach(func(_, ix gjson.Result) bool {
			i := int(ix.Int())
			if i < 0 || i >= len(chunks) {
				return true
			}
			web := chunks[i].Get("web")
			key := "c:" + strconv.Itoa(start) + ":" + strconv.Itoa(end) + ":" + web.Get("uri").Str
			if web.Get("uri").Str == "" || g.seen[key] {
				return true
			}
			g.seen[key] = true
			dst = em.Cite(dst, &Citation{URL: web.Get("uri").Str, Title: web.Get("title").Str, CitedText: seg.Get("text").Str, Start: start, End: end})
			return true
		})
		return true
	})
	return dst
}

// geminiGroundingOut is what a Gemini client is to get of the server
// tool calls and results: the queries and sources a groundingMetadata
// reports, the fetched URLs a urlContextMetadata does.
type geminiGroundingOut struct {
	queries  []string
	sources  []WebResult
	fetched  []geminiFetched
	supports []geminiSupport
}

// geminiSupport is a citation as a groundingSupport: a segment of the
// answer (its offsets when known: end < 0 when not) and the page.
type geminiSupport struct {
	start, end int
	text       string
	url, title string
}

// cite takes a citation of the text at offset..offset+len(text) of the
// answer; text is "" when not known yet (a stream's citation that comes
// before its text), and then the segment is the cited text alone.
func (g *geminiGroundingOut) cite(c *Citation, text string, offset int) {
	s := geminiSupport{end: -1, text: c.CitedText, url: c.URL, title: c.Title}
	switch {
	case text != "":
		st, e := c.span(text)
		s.start, s.end, s.text = offset+st, offset+e, text[st:e]
	case c.End > 0:
		s.start, s.end = offset+c.Start, offset+c.End
	}
	g.supports = append(g.supports, s)
}

// geminiFetched is a fetch a urlContextMetadata reports.
type geminiFetched struct {
	id, url string
	failed  bool
}

// add takes a server tool part.
func (g *geminiGroundingOut) add(t PartType, u *ServerToolUse) {
	if u == nil {
		return
	}
	switch {
	case t == PartServerToolCall && u.Kind == ServerWebSearch && u.Query != "":
		g.queries = append(g.queries, u.Query)
	case t == PartServerToolCall && u.Kind == ServerWebFetch:
		g.fetched = append(g.fetched, geminiFetched{id: u.ID, url: u.URL})
	case t == PartServerToolResult && u.Kind == ServerWebFetch:
		for i := range g.fetched {
			if g.fetched[i].id == u.ID {
				g.fetched[i].failed = u.ErrorCode != ""
				return
			}
		}
		if len(u.Results) > 0 {
			g.fetched = append(g.fetched, geminiFetched{id: u.ID, url: u.Results[0].URL, failed: u.ErrorCode != ""})
		}
	case t == PartServerToolResult:
		g.sources = append(g.sources, u.Results...)
	}
}

func (g *geminiGroundingOut) empty() bool {
	return len(g.queries) == 0 && len(g.sources) == 0 && len(g.fetched) == 0 && len(g.supports) == 0
}

// chunkIndex is the index of url among the sources, added when missing:
// a support points at a chunk of its own groundingMetadata.
func (g *geminiGroundingOut) chunkIndex(url, title string) int {
	for i := range g.sources {
		if g.sources[i].URL == url {
			return i
		}
	}
	g.sources = append(g.sources, WebResult{URL: url, Title: title})
	return len(g.sources) - 1
}

// append writes the candidate members ,"groundingMetadata":{…} and
// ,"urlContextMetadata":{…} for what was added, and empties g.
func (g *geminiGroundingOut) append(b []byte) []byte {
	chunks := make([]int, len(g.supports))
	for i := range g.supports {
		chunks[i] = g.chunkIndex(g.supports[i].url, g.supports[i].title)
	}
	if len(g.queries) > 0 || len(g.sources) > 0 {
		b = append(b, `,"groundingMetadata":{`...)
		if len(g.queries) > 0 {
			b = append(b, `"webSearchQueries":`...)
			b = appendStringList(b, g.queries)
		}
		if len(g.sources) > 0 {
			b = appendJSONComma(b)
			b = append(b, `"groundingChunks":[`...)
			for i := range g.sources {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"web":{"uri":`...)
				b = appendJSONString(b, g.sources[i].URL)
				b = append(b, `,"title":`...)
				b = appendJSONString(b, g.sources[i].Title)
				b = append(b, "}}"...)
			}
			b = append(b, ']')
		}
		if len(g.supports) > 0 {
			b = append(b, `,"groundingSupports":[`...)
			for i := range g.supports {
				s := &g.supports[i]
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"segment":{`...)
				if s.end >= 0 {
					b = append(b, `"startIndex":`...)
					b = appendJSONInt(b, int64(s.start))
					b = append(b, `,"endIndex":`...)
					b = appendJSONInt(b, int64(s.end))
					b = append(b, ',')
				}
				b = append(b, `"text":`...)
				b = appendJSONString(b, s.text)
				b = append(b, `},"groundingChunkIndices":[`...)
				b = appendJSONInt(b, int64(chunks[i]))
				b = append(b, "]}"...)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if len(g.fetched) > 0 {
		b = append(b, `,"urlContextMetadata":{"urlMetadata":[`...)
		n := 0
		for _, f := range g.fetched {
			url, status := f.url, "URL_RETRIEVAL_STATUS_SUCCESS"
			if f.failed {
				status = "URL_RETRIEVAL_STATUS_ERROR"
			}
			if url == "" {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"retrievedUrl":`...)
			b = appendJSONString(b, url)
			b = append(b, `,"urlRetrievalStatus":`...)
			b = appendJSONString(b, status)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	*g = geminiGroundingOut{queries: g.queries[:0], sources: g.sources[:0], fetched: g.fetched[:0], supports: g.supports[:0]}
	return b
}
