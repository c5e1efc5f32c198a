"""Export of every admin change list (CSV, XLSX) and the previewed CSV import, with django-import-export.

Export
    `ListExportMixin` is on `PMAdmin`, so every project admin has an "Export" button, and
    `export_everywhere` gives it to the admins of Django and the libraries (users, groups, tokens, the
    lockout log) once every admin is registered. An export holds the rows of the change list as filtered,
    searched and sorted (the admin's own queryset through its ChangeList), for whoever may view the list.
    Its columns are the list's columns that are model fields, or are sorted by one (a badge sorted by
    `status` exports the status' label); a column drawn from something else (a count, a computed figure)
    is left out. Secrets never are columns: a field whose name says password, digest, secret, credential
    or token key is skipped wherever it is named, and so is the text of a model that has one.
    An admin that imports exports with its import resource instead, so an export can be edited and
    imported again.

Import
    `ServiceImportMixin` plus a `ServiceResource` per model (inventory/resources.py,
    deployment/resources.py). The upload is read and every row goes through the app's own service
    (part_create, site_create, network_set, ...), in one transaction that is rolled back: the PM sees a
    preview of every row, or the refused rows with their line and the rule each broke (the service's own
    sentence). Only then is "Confirm import" offered, and it runs the same rows again for real, all or
    nothing: if a row is refused now (the data changed meanwhile), nothing is written and the PM is told
    which. Every row written carries the services' audit row. The upload waits for the confirmation in
    the default file storage under imports/ (shared by every web process, unlike a temporary folder), and
    is deleted once it is imported or refused; a preview never confirmed leaves its upload there.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import IntegrityError, models
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from import_export import resources, widgets
from import_export.admin import ExportMixin, ImportMixin
from import_export.fields import Field
from import_export.forms import ExportForm
from import_export.tmp_storages import MediaStorage

from werkbank.errors import DomainError, InvalidInput
from werkbank.integrity import integrity_sentence
from werkbank.spreadsheets import CSV, XLSX

#: Field names that hold a secret or a hash of one: never a column of an export.
SECRET = re.compile(r"password|digest|secret|credential|token_key", re.IGNORECASE)


def is_secret(model: type[models.Model], path: str) -> bool:
    """Whether a column path names a secret, or is the text of a model that holds one (knox's token
    prints its digest)."""
    if path == "__str__":
        return any(SECRET.search(field.name) for field in model._meta.get_fields())
    return any(SECRET.search(part) for part in path.split("__"))


# --- export ---------------------------------------------------------------------------------------------


class TextWidget(widgets.Widget):
    """A related row or a choice as its text ("Alpha Rentals GmbH", "ROI review"), in CSV and XLSX alike."""

    def render(self, value: Any, obj: Any = None, **kwargs: Any) -> Any:
        return "" if value is None else str(value)


def _resolve(model: type[models.Model], path: str) -> tuple[Any, list[str]] | None:
    """The model field at the end of `path` ("order__customer__name") and the relations on the way, or
    None when the path leaves the model's concrete forward fields (an annotation, a reverse relation)."""
    parts = path.split("__")
    relations: list[str] = []
    current = model
    for index, part in enumerate(parts):
        try:
            field = current._meta.get_field(part)
        except FieldDoesNotExist:
            return None
        if not getattr(field, "concrete", False) or field.many_to_many:
            return None
        if index == len(parts) - 1:
            return field, relations
        if not field.is_relation or field.related_model is None:
            return None
        relations.append("__".join(parts[: index + 1]))
        current = field.related_model
    return None


def _column(model_admin: admin.ModelAdmin, name: Any) -> tuple[str, str] | None:
    """(field path, column label) of one entry of list_display, or None if it is no model field's."""
    model = model_admin.model
    if name == "__str__":
        return "__str__", str(capfirst(model._meta.verbose_name))
    if not isinstance(name, str):
        return None
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        display = getattr(model_admin, name, None) or getattr(model, name, None)
        ordering = getattr(display, "admin_order_field", None)
        if not isinstance(ordering, str):
            return None
        label = getattr(display, "short_description", None) or capfirst(name.replace("_", " "))
        return ordering.lstrip("-"), str(capfirst(label))
    return name, str(capfirst(getattr(field, "verbose_name", name)))


def list_resource(model_admin: admin.ModelAdmin, list_display: Any) -> type[resources.Resource]:
    """A resource whose columns are the change list's model-field columns, secrets left out."""
    model = model_admin.model
    attrs: dict[str, Any] = {}
    related: set[str] = set()
    for name in list_display:
        column = _column(model_admin, name)
        if column is None or is_secret(model, column[0]):
            continue
        path, label = column
        if path == "__str__":
            attrs["row"] = Field(column_name=label, dehydrate_method=str)
            continue
        resolved = _resolve(model, path)
        if resolved is None:
            continue
        field, relations = resolved
        related.update(relations)
        if field.is_relation:
            related.add(path)
            widget: widgets.Widget = TextWidget()
        elif field.choices:
            head, _sep, tail = path.rpartition("__")
            path = f"{head}__get_{tail}_display" if head else f"get_{tail}_display"
            widget = TextWidget()
        else:
            widget_class = resources.ModelResource.widget_from_django_field(field)
            widget = widget_class(**resources.ModelResource.widget_kwargs_for_field(field.name, field))
        key = path.replace("__", "_")
        if key not in attrs:
            attrs[key] = Field(attribute=path, column_name=label, widget=widget)
    if not attrs and not is_secret(model, "__str__"):  # every column is computed: the row's own text
        attrs["row"] = Field(column_name=str(capfirst(model._meta.verbose_name)), dehydrate_method=str)

    def filter_export(self: Any, queryset: Any, **kwargs: Any) -> Any:
        # The rows' related objects come with them: one query for the list, not one per row and column.
        return queryset.select_related(*sorted(related)) if related else queryset

    def get_display_name(cls: Any) -> str:
        return str(capfirst(model._meta.verbose_name_plural))

    attrs["filter_export"] = filter_export
    attrs["get_display_name"] = classmethod(get_display_name)
    return type(f"{model.__name__}ListResource", (resources.Resource,), attrs)


class ListExportMixin(ExportMixin):
    """An "Export" button on the change list: the rows as filtered, as CSV or XLSX, for whoever may view
    the list."""

    # The library's default form selects columns with inline event handlers, which the CSP refuses.
    export_form_class = ExportForm

    @property
    def export_formats(self) -> list[Any]:
        return [CSV, XLSX]

    def has_export_permission(self, request: HttpRequest) -> bool:
        return bool(self.has_view_permission(request))

    def get_export_resource_classes(self, request: HttpRequest) -> list[Any]:
        if self.resource_classes:
            return list(self.resource_classes)
        return [list_resource(self, self.get_list_display(request))]


def export_everywhere(site: admin.AdminSite) -> None:
    """Give the export to every registered admin that lacks it (Django's and the libraries' own)."""
    for model, model_admin in list(site._registry.items()):
        if isinstance(model_admin, ExportMixin):
            continue
        cls = type(model_admin)
        site.unregister(model)
        site.register(model, type(cls.__name__, (ListExportMixin, cls), {"__module__": cls.__module__}))


# --- import ---------------------------------------------------------------------------------------------


class NamedForeignKeyWidget(widgets.ForeignKeyWidget):
    """A related row by its name in the file ("EU Parts GmbH"), and its name in an export."""

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> Any:
        text = "" if value is None else str(value).strip()
        if not text:
            return None
        try:
            return self.get_queryset(text, row).get(**{self.field: text})
        except self.model.DoesNotExist:
            raise ValueError(
                _("no %(model)s is named %(name)r.") % {"model": self.model._meta.verbose_name, "name": text}
            ) from None


def refusal(error: DomainError) -> ValidationError:
    """A service's refusal as the row's validation error: on the column it names, else on the row."""
    if isinstance(error, InvalidInput):
        return ValidationError({error.field: error.field_message})
    return ValidationError(error.message)


class ServiceResource(resources.ModelResource):
    """A model's CSV columns whose rows are written by the app's services, never by a model save.

    Subclasses name their columns (`Meta.fields`), the columns that find an existing row
    (`Meta.import_id_fields`), and write a row with `write`. A row that changes nothing is shown as
    skipped. The model's field checks (choices, lengths, formats) run on the columns given before the
    service is called; the service's own rules and its audit row come with the call.
    """

    class Meta:
        use_transactions = True
        skip_unchanged = True
        report_skipped = True
        clean_model_instances = False

    def write(self, *, instance: Any, created: bool, values: dict[str, Any], actor: Any) -> models.Model:
        """Create the row (`created`) or change it; `values` are the columns given, for a change only
        those that differ from the stored row."""
        raise NotImplementedError

    def get_instance(self, instance_loader: Any, row: Any) -> Any:
        for name in self.get_import_id_fields():
            field = self.fields[name]
            if field.column_name in row:
                try:
                    field.clean(row)
                except ValueError as error:  # a key column naming nothing (a rack's unknown site)
                    raise ValidationError({field.column_name: str(error)}) from None
        return super().get_instance(instance_loader, row)

    def import_field(self, field: Any, instance: Any, row: Any, is_m2m: bool = False, **kwargs: Any) -> None:
        try:
            super().import_field(field, instance, row, is_m2m, **kwargs)
        except ArithmeticError:  # decimal.InvalidOperation from a number column: the row's error on it
            raise ValueError(
                _("%(value)r is not a number.") % {"value": row.get(field.column_name)}
            ) from None

    def _given(self, instance: Any, row: Any) -> dict[str, Any]:
        return {
            field.attribute: getattr(instance, field.attribute)
            for field in self.get_import_fields()
            if field.attribute and field.column_name in row
        }

    def save_instance(self, instance: Any, is_create: bool, row: Any, **kwargs: Any) -> None:
        values = self._given(instance, row)
        # The model fields' own checks on the columns given (choices, lengths, formats), so that the service
        # is handed well-formed values; its rules are its own (the check constraints stay the backstop).
        instance.clean_fields(exclude={field.name for field in instance._meta.concrete_fields} - set(values))
        if not is_create:
            stored = type(instance)._default_manager.get(pk=instance.pk)
            values = {name: value for name, value in values.items() if getattr(stored, name) != value}
        try:
            written = self.write(
                instance=instance, created=is_create, values=values, actor=kwargs.get("user")
            )
        except DomainError as error:
            raise refusal(error) from None
        except IntegrityError as error:  # a race past the service's checks: the constraint's sentence
            raise ValidationError(integrity_sentence(error)) from None
        instance.pk = written.pk

    def after_import(self, dataset: Any, result: Any, **kwargs: Any) -> None:
        """Nothing: ids come from the database's own sequence, never from a file (the library would reset
        the sequence here)."""


class ServiceImportMixin(ImportMixin):
    """An "Import" button beside "Export": a CSV file, previewed row by row, written only when confirmed,
    and then all or nothing. For PMs who may add and change the model."""

    import_export_change_list_template = "admin/import_export/change_list_import_export.html"
    import_template_name = "admin/werkbank/import.html"
    tmp_storage_class = MediaStorage

    @property
    def import_formats(self) -> list[Any]:
        return [CSV]

    def get_tmp_storage_class_kwargs(self) -> dict[str, Any]:
        return {"MEDIA_FOLDER": "imports"}

    def has_import_permission(self, request: HttpRequest) -> bool:
        return bool(self.has_add_permission(request) and self.has_change_permission(request))

    def import_action(self, request: HttpRequest, **kwargs: Any) -> HttpResponse:
        response = super().import_action(request, **kwargs)
        context = getattr(response, "context_data", None) or {}
        upload = getattr(context.get("form"), "cleaned_data", {}).get("import_file")
        stored = getattr(upload, "tmp_storage_name", None)
        if stored and "result" in context and not context.get("confirm_form"):
            # Refused: no confirmation will read the upload, so it is not kept.
            self.get_tmp_storage_class()(name=stored, **self.get_tmp_storage_class_kwargs()).remove()
        return response

    def get_import_data_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        kwargs = super().get_import_data_kwargs(**kwargs)
        # A refused row rolls every row back, in the preview and when confirmed alike.
        kwargs["rollback_on_validation_errors"] = True
        return kwargs

    def process_result(self, result: Any, request: HttpRequest) -> HttpResponse:
        refused = [*row_refusals(result)]
        if not refused:
            return super().process_result(result, request)
        for line, text in refused:
            messages.error(request, _("Line %(line)s: %(text)s") % {"line": line, "text": text})
        messages.error(request, _("Nothing was imported: correct the file and upload it again."))
        opts = self.model._meta
        return HttpResponseRedirect(reverse(f"admin:{opts.app_label}_{opts.model_name}_import"))


def row_refusals(result: Any) -> list[tuple[int, str]]:
    """(line in the file, sentence) of each refused row of an import result; the header is line 1."""
    refused = [(number + 1, str(error.error)) for number, errors in result.row_errors() for error in errors]
    for invalid in result.invalid_rows:
        for field, texts in invalid.error_dict.items():
            for text in texts:
                where = "" if field == "__all__" else f"{field}: "
                refused.append((invalid.number + 1, f"{where}{text}"))
    refused += [(1, str(error.error)) for error in result.base_errors]
    return sorted(refused)
