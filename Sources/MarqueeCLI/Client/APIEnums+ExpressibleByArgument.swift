import ArgumentParser
import MarqueeClient

// The API's enumerations as option values, by their names in the API document
// (`--environment sandbox`, `--role publisher`); argument-parser lists them in help and refuses
// others before any request.
extension Components.Schemas.Environment: ExpressibleByArgument {}
extension Components.Schemas.Role: ExpressibleByArgument {}
extension Components.Schemas.EventState: ExpressibleByArgument {}
extension Components.Schemas.ChannelState: ExpressibleByArgument {}
extension Components.Schemas.StoragePolicy: ExpressibleByArgument {}
extension Components.Schemas.PriorityPolicy: ExpressibleByArgument {}
extension Components.Schemas.BroadcastEvent: ExpressibleByArgument {}
