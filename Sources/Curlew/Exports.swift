// The engine and its vocabulary (prepared requests, transfer and connection options, errors)
// live in CurlewCore; `import Curlew` brings them along.
@_exported public import CurlewCore
