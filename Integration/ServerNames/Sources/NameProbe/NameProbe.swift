// The name probe: scripts/check-server-names.sh writes NameProbe.generated.swift beside this file,
// naming every public type of Curlew and CurlewTesting unqualified next to `import Hummingbird`.
// It is its own target so that types the README examples declare (in the test target) cannot
// shadow, and so hide, a collision between Curlew and Hummingbird.
