from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from neuromem_site.api.envelope import error_body
from neuromem_site.api.health import system_health
from neuromem_site.api.permissions import user_ids_agree
from neuromem_site.api.serializers import validated_input


class HealthCheckOutput(serializers.Serializer):
    ok = serializers.BooleanField()
    detail = serializers.CharField()
    latency_ms = serializers.FloatField()


HealthOutput = inline_serializer(
    "Health",
    {
        "status": serializers.ChoiceField(["healthy", "degraded", "unhealthy"]),
        "checks": inline_serializer(
            "HealthChecks",
            {
                # A field instance each: one bound to four fields is the schema's last only.
                "database": HealthCheckOutput(),
                "redis": HealthCheckOutput(),
                "worker": HealthCheckOutput(),
                "beat": HealthCheckOutput(),
            },
        ),
    },
)


class HealthApi(APIView):
    """Database, Redis, worker (ping round trip) and beat (heartbeat); 503 when unhealthy."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    @extend_schema(
        responses={
            200: HealthOutput,
            # The error envelope, and `data` as on a 200: monitors read one shape.
            503: OpenApiResponse(
                {
                    "allOf": [
                        {"$ref": "#/components/schemas/ErrorEnvelope"},
                        {
                            "type": "object",
                            "required": ["data"],
                            "properties": {"data": {"$ref": "#/components/schemas/Health"}},
                        },
                    ]
                },
                "Unhealthy: database or Redis failing (UNAVAILABLE)",
            ),
        },
        auth=[],
    )
    def get(self, request: Request) -> Response:
        health = system_health()
        if health["status"] != "unhealthy":
            return Response(health)
        failing = ", ".join(name for name, check in health["checks"].items() if not check["ok"])
        body = error_body("UNAVAILABLE", f"NeuroMem is unhealthy: {failing} failing.")
        body["data"] = health  # monitors read the same `data` whatever the status
        return Response(body, status=503)


class WhoAmIOutput(serializers.Serializer):
    name = serializers.CharField()
    user_prefixes = serializers.ListField(child=serializers.CharField())
    is_staff = serializers.BooleanField()


class WhoAmIApi(APIView):
    """The API client the bearer token belongs to: a cheap way to check a token."""

    @extend_schema(responses=WhoAmIOutput)
    def get(self, request: Request) -> Response:
        return Response(WhoAmIOutput(request.user).data)


def validated_user_input(
    request: Request, serializer_class: type[serializers.Serializer], data
) -> dict:
    """validated_input, whose `user_id` (the one the service will act on) agrees with every
    other the request names (user_ids_agree)."""
    validated = validated_input(serializer_class, data)
    user_ids_agree(request, validated["user_id"])
    return validated
