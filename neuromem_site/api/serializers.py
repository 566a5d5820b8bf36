from rest_framework import serializers


class StrictInputSerializer(serializers.Serializer):
    """Input serializer that rejects unknown fields (API.md; e.g. the removed `domain`/`type`)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = [key for key in data if key not in self.fields]
            if unknown:
                raise serializers.ValidationError({unknown[0]: ["Unknown field."]})
        return super().to_internal_value(data)
