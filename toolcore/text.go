package toolcore

// Text is a tool output that is the result's content as it is, not JSON: a tool returning
// Text("done") gets the content done, where the string "done" would be the JSON string "done",
// quotes included. It is for output that is prose for the model, such as the text content of a
// mounted MCP server's result, which must reach the model as the server wrote it. The content is
// capped like any other (MaxContentCodePoints, with TruncationMarker when cut), each invalid
// UTF-8 byte replaced by U+FFFD; nothing else is changed. Only the output itself is read this
// way: a Text inside a map, slice or struct is a string like any other.
type Text string
