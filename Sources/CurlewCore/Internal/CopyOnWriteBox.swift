/// A value kept behind one reference and copied on the first write while shared: the storage of
/// request and response values that travel through many layers.
///
/// A ``PreparedRequest`` or `RawResponse` is copied into every middleware layer, the redirect
/// step, the transfer and the error paths. Copying their fields one by one costs a reference-count
/// operation per string, dictionary and class they hold (about fifteen for a request); copying a
/// box costs one. Reads go straight to the shared storage; a write first makes the storage unique.
@usableFromInline package struct CopyOnWriteBox<Value: Sendable>: Sendable {
    /// The shared storage. It is written only through ``value``'s `_modify`, after
    /// `isKnownUniquelyReferenced` showed this box to be its sole owner, so an instance that two
    /// boxes (and so possibly two threads) can see is never written again. That invariant, not a
    /// lock, is why it is `@unchecked Sendable`. It also makes the runtime's dynamic exclusivity
    /// checks redundant: the owning value's own accesses are
    /// checked statically.
    ///
    /// Inlinable, with everything it touches, because both modules box their values in it: a
    /// generic type's unspecialised accessors, called across modules, go through its metadata.
    @usableFromInline final class Storage: @unchecked Sendable {
        @usableFromInline @exclusivity(unchecked) var value: Value
        @inlinable init(_ value: Value) { self.value = value }
    }

    @usableFromInline var storage: Storage

    /// Boxes `value`.
    @inlinable package init(_ value: Value) {
        storage = Storage(value)
    }

    /// The boxed value; writing copies the storage first when another box shares it.
    @inlinable package var value: Value {
        _read { yield storage.value }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.value) }
            yield &storage.value
        }
    }

    /// Whether both boxes share one storage, so their values are certainly equal; a check of one
    /// pointer before a field-by-field comparison.
    @inlinable package func isIdentical(to other: CopyOnWriteBox) -> Bool {
        storage === other.storage
    }
}

extension CopyOnWriteBox: Equatable where Value: Equatable {
    @inlinable package static func == (lhs: CopyOnWriteBox, rhs: CopyOnWriteBox) -> Bool {
        lhs.isIdentical(to: rhs) || lhs.value == rhs.value
    }
}

extension CopyOnWriteBox: Hashable where Value: Hashable {
    @inlinable package func hash(into hasher: inout Hasher) {
        value.hash(into: &hasher)
    }
}
