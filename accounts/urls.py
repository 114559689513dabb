"""Log in and out, passwords, and the API token (django.contrib.auth's pages, reset gated on mail)."""

from django.contrib.auth import views as auth
from django.urls import path, reverse_lazy

from accounts.views import ThrottledAuthToken, choose_language, when_mail_is_set_up

urlpatterns = [
    path("login/", auth.LoginView.as_view(), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path("language/", choose_language, name="choose-language"),
    path("password_change/", auth.PasswordChangeView.as_view(), name="password_change"),
    path("password_change/done/", auth.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("password_reset/", when_mail_is_set_up(auth.PasswordResetView.as_view()), name="password_reset"),
    path(
        "password_reset/done/",
        when_mail_is_set_up(auth.PasswordResetDoneView.as_view()),
        name="password_reset_done",
    ),
    path(
        "reset/<uidb64>/<token>/",
        when_mail_is_set_up(auth.PasswordResetConfirmView.as_view()),
        name="password_reset_confirm",
    ),
    # The one-time log-in link of an invited tester's new account: choose a password, then you are in.
    path(
        "welcome/<uidb64>/<token>/",
        auth.PasswordResetConfirmView.as_view(
            template_name="registration/welcome.html",
            post_reset_login=True,
            post_reset_login_backend="django.contrib.auth.backends.ModelBackend",
            success_url=reverse_lazy("home"),
        ),
        name="welcome",
    ),
    path(
        "reset/done/",
        when_mail_is_set_up(auth.PasswordResetCompleteView.as_view()),
        name="password_reset_complete",
    ),
]

token_view = ThrottledAuthToken.as_view()
