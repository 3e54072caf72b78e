public import HTTPTypes

extension HTTPFields {
    /// The value of the first field named `name`, `nil` when there is none.
    ///
    /// `fields[name]` joins the values of every field with that name, through the standard
    /// library's unspecialized `joined(separator:)` over a lazy map: a generic metadata lookup per
    /// step, more than the rest of a cache step costs. Where one value is meant (an entity tag,
    /// a date), this reads it; `contains(_:)` asks whether a field is present.
    @inlinable package func firstValue(_ name: HTTPField.Name) -> String? {
        for field in self where field.name == name { return field.value }
        return nil
    }
}
