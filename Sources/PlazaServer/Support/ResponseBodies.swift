// swift-format-ignore-file: AvoidRetroactiveConformances
// Both sides are known here: PlazaAPI is Plaza's own SDK module, which must not depend on
// Hummingbird (apps import it), and Hummingbird will never declare conformances for Plaza's types.
// So these conformances cannot clash with another module's, and `@retroactive` says that.

import Hummingbird
import PlazaAPI

// The types handlers answer with as they are, encoded by `PlazaResponseEncoder` (compact JSON,
// through `JSONWritable` where the type has it).
extension AccountDeletionScheduled: @retroactive ResponseEncodable {}
extension ActivityHeatmap: @retroactive ResponseEncodable {}
extension AuditEntry: @retroactive ResponseEncodable {}
extension AuthProviderInfo: @retroactive ResponseEncodable {}
extension AuthResponse: @retroactive ResponseEncodable {}
extension HashtagSummary: @retroactive ResponseEncodable {}
extension AdminOverview: @retroactive ResponseEncodable {}
extension InstanceInfo: @retroactive ResponseEncodable {}
extension InstanceInvite: @retroactive ResponseEncodable {}
extension PendingRegistration: @retroactive ResponseEncodable {}
extension CollectionItem: @retroactive ResponseEncodable {}
extension Comment: @retroactive ResponseEncodable {}
extension Health: @retroactive ResponseEncodable {}
extension HistoryItem: @retroactive ResponseEncodable {}
extension JSONValue: @retroactive ResponseEncodable {}
extension JoinRequest: @retroactive ResponseEncodable {}
extension KeywordFilter: @retroactive ResponseEncodable {}
extension LikeState: @retroactive ResponseEncodable {}
extension Me: @retroactive ResponseEncodable {}
extension Media: @retroactive ResponseEncodable {}
extension OutgoingMail: @retroactive ResponseEncodable {}
extension Page: @retroactive ResponseEncodable {}
extension PlazaAPI.Notification: @retroactive ResponseEncodable {}
extension Post: @retroactive ResponseEncodable {}
extension Poll: @retroactive ResponseEncodable {}
extension PushDevice: @retroactive ResponseEncodable {}
extension RecoveryCodes: @retroactive ResponseEncodable {}
extension Report: @retroactive ResponseEncodable {}
extension SavedCollection: @retroactive ResponseEncodable {}
extension Session: @retroactive ResponseEncodable {}
extension Space: @retroactive ResponseEncodable {}
extension SpaceInvite: @retroactive ResponseEncodable {}
extension SpaceMember: @retroactive ResponseEncodable {}
extension Suggestions: @retroactive ResponseEncodable {}
extension TwoFactorSetup: @retroactive ResponseEncodable {}
extension TwoFactorStatus: @retroactive ResponseEncodable {}
extension User: @retroactive ResponseEncodable {}
extension WebPushKey: @retroactive ResponseEncodable {}
