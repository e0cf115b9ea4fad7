"""The evidence endpoints' request and response shapes (OpenAPI through drf-spectacular)."""
from rest_framework import serializers

from governance.api.fields import StrictSerializer, String


class VerifyRequestSerializer(StrictSerializer):
    text = String(allow_blank=False, trim_whitespace=False,
                  help_text="The text as published; it is normalised as docs/evidence.md says before hashing.")


class EvidenceCheckSerializer(serializers.Serializer):
    check = serializers.CharField()
    result = serializers.CharField(help_text="passed, reported, redacted, skipped, not_checked, …")
    reason = serializers.CharField(required=False, help_text="Why a check did not run or decide: not_finished_text, "
                                                             "mode_off, no_rules, timeout, …")


class EvidenceReviewSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accepted"])
    by = serializers.CharField(help_text="The editor's user name.")
    at = serializers.DateTimeField(allow_null=True)
    edited = serializers.BooleanField(help_text="Whether the editor changed the text before accepting it.")


class EvidenceRecordSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    at = serializers.DateTimeField()
    surface = serializers.ChoiceField(choices=["api", "openai_chat", "openai_responses", "anthropic", "task",
                                               "screening"])
    configuration = serializers.CharField()
    also = serializers.ListField(child=serializers.CharField())
    policy_version = serializers.IntegerField(allow_null=True)
    outcome = serializers.CharField(help_text="allowed or allowed_with_hints (a blocked text is not delivered).")
    checks = EvidenceCheckSerializer(many=True)
    verification = serializers.CharField(help_text="verified, unverified, not_applicable (or empty).")
    correlation_id = serializers.CharField()
    actor = serializers.CharField()
    task = serializers.UUIDField(allow_null=True)
    review = EvidenceReviewSerializer(allow_null=True)
    text_hash = serializers.CharField(help_text="HMAC-SHA256 (hex) of the normalised text; never the text.")
    key_id = serializers.CharField(help_text="Fingerprint of the evidence key that made text_hash.")


class VerifyResponseSerializer(serializers.Serializer):
    text_hash = serializers.CharField(allow_null=True,
                                      help_text="The hash of the text sent, under this installation's key; null "
                                                "when no record of this consumer matches.")
    count = serializers.IntegerField()
    records = EvidenceRecordSerializer(many=True)


class EvidencePageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = EvidenceRecordSerializer(many=True)
