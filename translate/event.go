package translate

// EventType is the kind of a stream event.
type EventType uint8

// Stream event types. A well-formed stream, as every StreamDecoder produces it
// (see Emitter), is:
//
//	EventMessageStart
//	( EventBlockStart EventBlockDelta* EventBlockStop )*   blocks never interleave
//	EventUsage*                                            at any point after start
//	EventMessageStop | EventError                          exactly one, last
//
// An EventError may come at any point, even first (an upstream that failed
// before it started), and may leave a block open: it ends the stream
// whatever state it is in.
const (
	EventMessageStart EventType = iota + 1
	EventBlockStart
	EventBlockDelta
	EventBlockStop
	EventUsage
	EventMessageStop
	EventError
)

var eventTypeNames = [...]string{"", "message_start", "block_start", "block_delta", "block_stop", "usage", "message_stop", "error"}

func (t EventType) String() string {
	if int(t) < len(eventTypeNames) {
		return eventTypeNames[t]
	}
	return "unknown"
}

// BlockType is the kind of a content block in a stream.
type BlockType uint8

// Block types.
const (
	BlockText BlockType = iota + 1
	BlockThinking
	BlockRedactedThinking
	BlockToolCall
	// BlockServerToolCall and BlockServerToolResult are a search or fetch
	// the backend ran and what it found. They arrive whole: their
	// EventBlockStart carries everything in Server and is followed at once
	// by their EventBlockStop, with no delta between:
	//
	//	EventBlockStart{Block: BlockServerToolCall, ID, Name: kind, Server}  EventBlockStop
	//	EventBlockStart{Block: BlockServerToolResult, ID: call id, Server}   EventBlockStop
	//
	// A result follows its call, not necessarily at once (Gemini reports
	// every query, then every source). Encoders of protocols without them
	// skip both, start and stop, and number the blocks that follow as if
	// they had not been there.
	BlockServerToolCall
	BlockServerToolResult
)

var blockTypeNames = [...]string{"", "text", "thinking", "redacted_thinking", "tool_call", "server_tool_call", "server_tool_result"}

func (t BlockType) String() string {
	if int(t) < len(blockTypeNames) {
		return blockTypeNames[t]
	}
	return "unknown"
}

// Event is one stream event in the IR. Which fields are set depends on Type:
//
//   - EventMessageStart: ID, Model, and Usage when the input count is known.
//   - EventBlockStart: Index, Block; ID and Name for a tool call; Signature
//     holds the whole payload of a redacted thinking block; Server the
//     whole server tool call or result (ID and Name repeat its id and kind).
//   - EventBlockDelta: Index, Block; Text is the text, the thinking text or
//     the tool call's argument fragment; Signature is a thinking signature
//     (then Text is empty); Citation a page a text block cites (then Text
//     is empty), at any point of the block.
//   - EventBlockStop: Index, Block.
//   - EventUsage: Usage, the cumulative counts known so far.
//   - EventMessageStop: Stop, StopSequence, and Usage (final counts) when known.
//   - EventError: Err.
type Event struct {
	Type  EventType
	Index int // block index: 0, 1, 2, ... in the order blocks start
	Block BlockType

	ID        string
	Model     string
	Name      string
	Text      string
	Signature string

	// Server is the server tool call or result of a block start.
	Server *ServerToolUse `json:",omitempty"`
	// Citation is, on a text delta without text, a page the text cites
	// (citations.go).
	Citation *Citation `json:",omitempty"`

	Usage        *Usage
	Stop         StopReason
	StopSequence string
	Err          *Error
}
