import Hummingbird
import PlazaAPI

// The types handlers answer with as they are, encoded by `PlazaResponseEncoder` (compact JSON,
// through `JSONWritable` where the type has it).
extension AccountDeletionScheduled: ResponseEncodable {}
extension ActivityHeatmap: ResponseEncodable {}
extension AuditEntry: ResponseEncodable {}
extension AuthProviderInfo: ResponseEncodable {}
extension AuthResponse: ResponseEncodable {}
extension HashtagSummary: ResponseEncodable {}
extension AdminOverview: ResponseEncodable {}
extension InstanceInfo: ResponseEncodable {}
extension InstanceInvite: ResponseEncodable {}
extension PendingRegistration: ResponseEncodable {}
extension CollectionItem: ResponseEncodable {}
extension Comment: ResponseEncodable {}
extension Health: ResponseEncodable {}
extension HistoryItem: ResponseEncodable {}
extension JSONValue: ResponseEncodable {}
extension JoinRequest: ResponseEncodable {}
extension KeywordFilter: ResponseEncodable {}
extension LikeState: ResponseEncodable {}
extension Me: ResponseEncodable {}
extension Media: ResponseEncodable {}
extension OutgoingMail: ResponseEncodable {}
extension Page: ResponseEncodable {}
extension PlazaAPI.Notification: ResponseEncodable {}
extension Post: ResponseEncodable {}
extension Poll: ResponseEncodable {}
extension PushDevice: ResponseEncodable {}
extension RecoveryCodes: ResponseEncodable {}
extension Report: ResponseEncodable {}
extension SavedCollection: ResponseEncodable {}
extension Session: ResponseEncodable {}
extension Space: ResponseEncodable {}
extension SpaceInvite: ResponseEncodable {}
extension SpaceMember: ResponseEncodable {}
extension Suggestions: ResponseEncodable {}
extension TwoFactorSetup: ResponseEncodable {}
extension TwoFactorStatus: ResponseEncodable {}
extension User: ResponseEncodable {}
extension WebPushKey: ResponseEncodable {}
