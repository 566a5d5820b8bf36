"""Test-only routes that exercise the API base (envelope, validation, prefix rule, paging)."""

from django.http import HttpResponse
from django.urls import include, path
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from core.access import user_access_check
from neuromem_site.api.models import ApiClient
from neuromem_site.api.permissions import IsStaffClient, user_ids_agree
from neuromem_site.api.serializers import StrictInputSerializer, UserIdField


class ItemInput(StrictInputSerializer):
    content = serializers.CharField(max_length=20)


class WriteInput(StrictInputSerializer):
    user_id = UserIdField()
    content = serializers.CharField(max_length=20)
    items = ItemInput(many=True, required=False)


class ScopedApi(APIView):
    def get(self, request, user_id=None):
        user_id = user_ids_agree(request, user_id or request.query_params.get("user_id"))
        user_access_check(caller=request.user.caller, user_id=user_id, write=False)
        return Response({"user_id": user_id})

    def post(self, request, user_id=None):
        data = WriteInput(data=request.data)
        data.is_valid(raise_exception=True)
        user_id = user_ids_agree(request, data.validated_data["user_id"])
        user_access_check(caller=request.user.caller, user_id=user_id, write=True)
        return Response(data.validated_data, status=201)


class StaffOnlyApi(APIView):
    permission_classes = [*APIView.permission_classes, IsStaffClient]

    def post(self, request):
        return Response({"done": True})


class CrashApi(APIView):
    def get(self, request):
        raise RuntimeError("boom")


def plain_crash(request):
    raise RuntimeError("boom outside DRF")


class ClientOutput(serializers.ModelSerializer):
    class Meta:
        model = ApiClient
        fields = ["name", "created_at"]


class ClientListApi(ListAPIView):
    queryset = ApiClient.objects.all()
    serializer_class = ClientOutput


def html_error(request):
    return HttpResponse("<h1>Bad</h1>", status=400)


urlpatterns = [
    path("api/v1/", include("neuromem_site.api.urls")),
    path("api/v1/test/scoped/", ScopedApi.as_view()),
    path("api/v1/test/users/<str:user_id>/", ScopedApi.as_view()),
    path("api/v1/test/staff/", StaffOnlyApi.as_view()),
    path("api/v1/test/crash/", CrashApi.as_view()),
    path("api/v1/test/plain-crash/", plain_crash),
    path("api/v1/test/html-error/", html_error),
    path("api/v1/test/clients/", ClientListApi.as_view()),
]
